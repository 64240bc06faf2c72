PY ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat setup.py | md5sum | cut -c1-8)

.PHONY: test bench bench-loop bench-ab demo install interfaces soak clean

$(VPY):
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip

$(STAMP): $(VPY) setup.py
	$(VPY) -m pip install -q -e '.[test,ros,colcon,interfaces]'
	touch $(STAMP)

# fill numba's cache for the installed source files (first node start in ~1 s instead of ~1 min)
install: $(STAMP)
	$(VPY) -m rne_control.compile

# the test-only control_msgs interfaces, built once into build/interfaces/ (about 2 min) and reused
interfaces: $(STAMP)
	$(VPY) test/interfaces/build.py

test: $(STAMP) interfaces
	$(VPY) -m pytest -q

bench: $(STAMP)
	$(VPY) bench/bench_dynamics.py
	$(VPY) bench/bench_floating.py
	$(VPY) bench/bench_elastic.py
	$(VPY) bench/bench_parallel.py
	$(VPY) bench/bench_identification.py
	$(VPY) bench/bench_closed_loop.py

# the arm against the bare echo node on both executors, then the palletiser and the platform: one invocation
bench-loop: $(STAMP)
	$(VPY) bench/bench_loop.py
	$(VPY) bench/bench_cycle.py
	$(VPY) bench/bench_descriptions.py
	$(VPY) bench/bench_stalls.py --with-sim config/arm7_controller.yaml

# the cycle and the single-call ratios of commit BASE against the working tree, alternating (bench/bench_ab.py)
bench-ab: $(STAMP)
	@test -n "$(BASE)" || (echo "usage: make bench-ab BASE=<commit>"; exit 2)
	$(VPY) bench/bench_ab.py --base $(BASE)

# 10 minutes at 1 kHz with trajectories, parameter changes and rne_sim restarts (bench/soak.py --minutes N)
soak: $(STAMP) interfaces
	$(VPY) bench/soak.py

demo: $(STAMP)
	$(VENV)/bin/rne_demo

clean:
	rm -rf $(VENV) build install log
