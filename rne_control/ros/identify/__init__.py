"""``rne_identify`` (:mod:`.cli`): ``fit`` offline (:mod:`rne_control.identification.cli`), ``run`` over ROS
(:mod:`.run`: records an excitation trajectory tracked by the running rne_controller)."""
