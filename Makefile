PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat setup.py | md5sum | cut -c1-8)

.PHONY: test bench bench-loop demo install clean

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

$(STAMP): $(VPY) setup.py
	$(VPY) -m pip install -q -e '.[test,ros,colcon]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(VPY) -m pytest -q

bench: $(STAMP)
	$(VPY) bench/bench_dynamics.py
	$(VPY) bench/bench_floating.py
	$(VPY) bench/bench_elastic.py
	$(VPY) bench/bench_closed_loop.py

bench-loop: $(STAMP)
	$(VPY) bench/bench_loop.py

demo: $(STAMP)
	$(VENV)/bin/rne_demo

clean:
	rm -rf $(VENV) build install log
