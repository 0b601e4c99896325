#!/usr/bin/env bash
# One gate-small release, unattended, in the order a session can afford (issue 14: "fit the
# retrain into one session"). Two sessions in a row trained a candidate and lost it with the
# machine before its evaluation finished; this script chains every step so that nothing waits
# for a person between them, and logs each step's wall time to $WORK/timings.tsv.
#
#   train/release.sh RECIPE VERSION [PREVIOUS_MODEL_DIR]
#   train/release.sh train/gatecli_train/configs/gate-small-refresh.toml 1.2.2
#
# Writes under $WORK (default /tmp/gatecli-release-VERSION), never into models/:
#   model/            the exported, parity-checked folder (gatecli train; its thresholds
#                     fitted on dev with its own int8 graph, the fp32 fit kept in
#                     extra.recalibration.previous), with the segment rule's
#                     decision.segment_min_prob chosen on dev where it helps and its graph
#                     saved optimised where that changes no logit (preoptimize)
#   segment_study.json   that choice and what it costs on every suite (segment_study --apply)
#   eval.json         gatecli eval --suite all --baseline PREVIOUS (gate + flips)
#   turns.jsonl       every turn of that eval, both models' predictions (--turns: diagnosis)
#   tfidf.json        TF-IDF trained on the same corpus, same suites (the card's comparison)
#   boundary_rank.json   AUROC and matched-recall false refusal: new, previous, TF-IDF
#   CHANGELOG.md      a copy of PREVIOUS's changelog with this release's section on top
#   bench.json        benchmarks/bench.py all, new vs previous in one run
# Shipping stays a decision: read eval.json's gate, then copy model/ over
# models/gatecli_models/gate-small, write the card (the last line printed says how) and
# commit. Measured on 2-core machines with the refresh recipe (1,507 steps): 2026-12-03, train
# + calibration + export + parity 22.5 min (0.77 s a step), eval of two models on all suites
# 9 min, TF-IDF build + eval 2.5 min; the 2026-12-02 machine ran 1.8 s a step (about 45 min).
# LIMIT=N cuts every eval suite and baseline split to N turns and the benchmark to N-sized
# sets: a rehearsal of the whole chain, e.g. with the smoke recipe (numbers mean nothing).
# TRAIN_SET="key=value ..." passes each as --set to the train step, e.g. to evaluate a
# candidate whose export failed its parity floor (TRAIN_SET=export.min_int8_agreement=0.994:
# the run is resumed, only calibration and export are redone); say so wherever it is reported.
# HALF=report evaluates only the report half of each held-out selection suite (eval, TF-IDF,
# boundary_rank: gatecli eval --half): for a recipe with [train] select_on = "heldout", which
# chose its step on the other half. Both models and TF-IDF are then read on the same turns.
# REUSE_MODEL=1 with WORK set to where `gatecli train --out $WORK/model` wrote skips the train
# step (see below).
set -euo pipefail

recipe=${1:?recipe .toml}
version=${2:?version, e.g. 1.2.2}
previous=${3:-models/gatecli_models/gate-small}
WORK=${WORK:-/tmp/gatecli-release-$version}
export HF_HUB_OFFLINE=1
mkdir -p "$WORK"
limit=() bench_size=() half=()
if [ -n "${HALF:-}" ]; then half=(--half "$HALF"); fi
# A recipe that chose its step on the select halves is never reported on them.
select_on=$(python -c 'import sys; from gatecli_train.config import load_recipe
print(load_recipe(sys.argv[1]).train.select_on)' "$recipe")
if [ "$select_on" = heldout ] && [ "${HALF:-}" != report ]; then
  echo "release.sh: $recipe selects on held-out select halves; run it with HALF=report" >&2
  exit 2
fi
if [ -n "${LIMIT:-}" ]; then
  limit=(--limit "$LIMIT")
  bench_size=(--n "$LIMIT" --turns $((LIMIT * 10)) --kernel-texts "$LIMIT" --repeats 1)
fi
# The previous release is copied first so that the baseline of the eval step is the folder
# this run started from, even if models/ is replaced meanwhile. (A recipe's model.init_from
# still names its own path; it is read once, when training starts.)
rm -rf "$WORK/previous" && cp -r "$previous" "$WORK/previous"

step() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name: $*" >&2
  "$@"
  printf '%s\t%d\n' "$name" $((SECONDS - start)) >>"$WORK/timings.tsv"
}

train_set=()
for kv in ${TRAIN_SET:-}; do train_set+=(--set "$kv"); done
# REUSE_MODEL=1 keeps a $WORK/model that `gatecli train -c RECIPE --out $WORK/model` already
# wrote, so a candidate can be checked by hand (a recipe's "check before any release chain")
# before the chain spends its hour; without it a finished run is re-exported (about 6 min).
if [ -n "${REUSE_MODEL:-}" ] && [ -f "$WORK/model/gatecli.json" ]; then
  echo "== train: reusing $WORK/model (REUSE_MODEL)" >&2
else
  step train gatecli train -c "$recipe" --out "$WORK/model" --no-progress "${train_set[@]}"
fi
# The segment rule's sentence threshold is chosen on dev (like the calibrated thresholds) and
# written into the new folder's policy when it is above the floors, so the eval below, the
# gate and the card all read the folder that would ship.
# Not with LIMIT: a cut dev set has too few risky multi-sentence turns to choose on.
if [ -z "${LIMIT:-}" ]; then
  step segment python -m gatecli_train.segment_study --model "$WORK/model" --apply \
    --json "$WORK/segment_study.json" ||
    echo "segment study failed: the folder keeps its policy as exported" >&2
fi
# The graph saved optimised (20-50 ms off every cold start), after a check that it
# computes the same logits on test turns and reads back for init_from; the folder is left as
# exported if the check fails.
step optimize python -m gatecli_train.preoptimize --model "$WORK/model" \
  --texts "${LIMIT:-1000}" || echo "preoptimize refused: the folder keeps its exported graph" >&2
step eval gatecli eval --model "$WORK/model" --baseline "$WORK/previous" --suite all \
  --json "$WORK/eval.json" --turns "$WORK/turns.jsonl" "${limit[@]}" "${half[@]}" \
  || echo "release gate failed: see $WORK/eval.json" >&2
if [ ! -d "$WORK/baselines/tfidf" ]; then
  step tfidf-build gatecli eval build-baselines --kind tfidf --out "$WORK/baselines" "${limit[@]}"
fi
step tfidf-eval gatecli eval --model "$WORK/baselines/tfidf" --suite all --json "$WORK/tfidf.json" \
  "${limit[@]}" "${half[@]}"
# Whether a TF-IDF win on an ordinary suite is its threshold or its ranking (boundary_rank).
step rank python -m gatecli_train.boundary_rank --model "$version=$WORK/model" \
  --model "previous=$WORK/previous" --model "TF-IDF=$WORK/baselines/tfidf" \
  --json "$WORK/boundary_rank.json" "${limit[@]}" "${half[@]}" || echo "boundary_rank failed" >&2
if [ -f "$WORK/previous/CHANGELOG.md" ]; then cp "$WORK/previous/CHANGELOG.md" "$WORK/CHANGELOG.md"; fi
step notes python -m gatecli_train.release_notes --eval "$WORK/eval.json" --version "$version" \
  --changelog "$WORK/CHANGELOG.md" --baseline-out "$WORK/previous-eval.json"
step bench python benchmarks/bench.py all --model "$WORK/model" --previous "$WORK/previous" \
  --out "$WORK/bench.json" "${bench_size[@]}"
cat "$WORK/timings.tsv" >&2
echo "card: python -m gatecli_train.card --model DIR --eval $WORK/eval.json" \
  "--compare-baseline previous --compare TF-IDF=$WORK/tfidf.json --tfidf TF-IDF --summary runs/$(basename "$recipe" .toml)/summary.json" >&2
