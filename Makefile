# For people used to make: each target is the same as `./course <target>` (see README).
# ARGS passes extra arguments through, e.g. `make test ARGS='-m "not browser"'`.
PYTHON ?= python3
ARGS ?=

.PHONY: setup lab test site

setup lab test site:
	$(PYTHON) ./course $@ $(ARGS)
