#!/usr/bin/env bash
# Mutation testing of the rule modules (docs/testing.md, "Mutation testing").
#
#   tools/mutation.sh                      # the rule modules, most important first
#   tools/mutation.sh sim/escape/params.py # chosen modules
#
# For each module: a scratch copy of the project (sim/, tests/, pyproject.toml) is made under
# $MUTATION_DIR, its [tool.mutmut] section is rewritten to mutate only that module against the
# module's own small test selection (below), then
#   1. mutmut mutates the code inside functions (mutmut 3 never touches module-level data or
#      decorated functions such as numba kernels),
#   2. tools/mutate_tables.py mutates the module-level rule tables (CLASS_DIE, MARKS, ...).
# Each prints its survivors and a score line; the worktree itself is never changed.
#
# Environment: MUTATION_DIR (default /tmp/sim-mutation), MUTATION_JOBS (mutmut workers, default 1:
# the machine is shared), MUTATION_SKIP_TABLES=1 or MUTATION_SKIP_MUTMUT=1 to run one half only.
# Not run in CI: a module takes from a few seconds (sim/composure.py) to tens of minutes (a reference).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${MUTATION_DIR:-/tmp/sim-mutation}"
JOBS="${MUTATION_JOBS:-1}"
PY="${PYTHON:-python}"

ESC="tests/escape/test_escape_rules.py tests/escape/test_escape_by_hand.py"
RST="tests/restraint/test_restraint_rules.py tests/restraint/test_restraint_composure.py \
tests/restraint/test_restraint_classes_by_hand.py tests/restraint/test_restraint_tables_by_hand.py"
CAM="tests/campus/test_campus_rules.py tests/campus/test_campus_worked_example.py"
FRM="tests/formation/test_formation_rules.py tests/formation/test_formation_dice.py \
tests/formation/test_formation_targeting.py"

# module -> "test selection|tables to mutate (empty: every module-level table)"
selection() {
    case "$1" in
        sim/composure.py) echo "$RST tests/escape/test_escape_by_hand.py|" ;;
        sim/dice.py) echo "tests/test_dice.py tests/test_dice_by_hand.py tests/formation/test_formation_dice.py|" ;;
        sim/escape/params.py | sim/escape/state.py | sim/escape/reference.py | sim/escape/policy.py) echo "$ESC|" ;;
        sim/escape/model.py) echo "$ESC|SLOTS,TIER_IDS,DEFAULT_DC,DEFAULT_BECOMES,MARKS,CLASSES" ;;
        sim/restraint/*.py) echo "$RST|" ;;
        sim/campus/*.py) echo "$CAM|" ;;
        sim/formation/*.py) echo "$FRM|" ;;
        *) echo "no test selection for $1; add it to tools/mutation.sh" >&2; return 1 ;;
    esac
}

MODULES=("$@")
if [ ${#MODULES[@]} -eq 0 ]; then
    MODULES=(sim/composure.py sim/escape/params.py sim/restraint/tables.py sim/dice.py
             sim/escape/model.py sim/escape/state.py sim/restraint/model.py sim/restraint/rules.py
             sim/escape/reference.py sim/restraint/reference.py
             sim/campus/model.py sim/campus/params.py sim/campus/rules.py sim/campus/reference.py
             sim/formation/model.py sim/formation/rules.py sim/formation/reference.py)
fi

for module in "${MODULES[@]}"; do
    sel="$(selection "$module")"
    tests=""
    for t in ${sel%%|*}; do [ -e "$ROOT/$t" ] && tests="$tests $t"; done
    tables="${sel#*|}"
    slug="$(echo "$module" | tr '/.' '__')"
    dir="$WORK/$slug"
    rm -rf "$dir"
    mkdir -p "$dir"
    (cd "$ROOT" && tar --exclude=__pycache__ --exclude=mutants -cf - sim tests tools pyproject.toml) | tar -xf - -C "$dir"
    # rewrite the [tool.mutmut] section (the last section of pyproject.toml) for this module
    "$PY" - "$dir/pyproject.toml" "$module" $tests <<'EOF'
import sys
path, module, tests = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path, encoding="utf-8").read().split("[tool.mutmut]")[0]
quoted = ", ".join(f'"{t}"' for t in tests)
text += ("[tool.mutmut]\nsource_paths = [\"sim\"]\n"
         f"only_mutate = [\"{module}\"]\n"
         "pytest_add_cli_args = [\"-p\", \"no:cacheprovider\", \"-x\", \"-q\"]\n"
         f"pytest_add_cli_args_test_selection = [{quoted}]\n")
open(path, "w", encoding="utf-8").write(text)
EOF
    echo "== $module  (tests: $tests)"
    if [ "${MUTATION_SKIP_MUTMUT:-0}" != 1 ]; then
        start=$(date +%s)
        (cd "$dir" && mutmut run --max-children "$JOBS" >mutmut.log 2>&1) || {
            echo "mutmut failed for $module, see $dir/mutmut.log"; tail -5 "$dir/mutmut.log"; continue; }
        (cd "$dir" && mutmut results --all true) >"$dir/results.txt" 2>/dev/null || true
        grep -E ': (survived|no tests|timeout|suspicious)' "$dir/results.txt" | sed 's/^ */survived  /' || true
        "$PY" - "$dir/results.txt" "$module" "$(( $(date +%s) - start ))" <<'EOF'
import collections, sys
counts = collections.Counter(line.rsplit(": ", 1)[1].strip() for line in open(sys.argv[1]) if ": " in line)
total = sum(counts.values())
killed = counts["killed"] + counts["timeout"]
score = 100.0 * killed / total if total else 100.0
rest = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()) if k not in ("killed", "timeout"))
print(f"mutmut {sys.argv[2]}: {killed}/{total} killed ({score:.0f}%){', ' + rest if rest else ''}, {sys.argv[3]} s")
EOF
    fi
    if [ "${MUTATION_SKIP_TABLES:-0}" != 1 ]; then
        (cd "$dir" && "$PY" tools/mutate_tables.py --root . --module "$module" --only "$tables" -- $tests)
    fi
done
