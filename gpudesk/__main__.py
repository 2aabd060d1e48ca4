from gpudesk._entry import run

run()
