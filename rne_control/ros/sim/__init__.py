"""``rne_sim`` (:mod:`.node`), the simulated robot driver: its parameters (:mod:`.settings`) and the joint
states and odometry it publishes (:mod:`.output`)."""
