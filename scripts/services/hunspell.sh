#!/usr/bin/env bash
# Hunspell spelling dictionaries for the validity metric (src/biaskit/evaluate/metrics/validity.py) and its
# tests: Czech, Polish, Slovak and US English from Debian (hunspell-cs, hunspell-pl, hunspell-sk,
# hunspell-en-us -> /usr/share/hunspell/<ll_CC>.aff/.dic). The Python reader (spylls) comes with the
# `metrics` extra (scripts/setup.sh). Idempotent: a fast no-op when all four dictionaries are present.
set -euo pipefail
DIR=/usr/share/hunspell
missing=()
for pair in cs_CZ:hunspell-cs pl_PL:hunspell-pl sk_SK:hunspell-sk en_US:hunspell-en-us; do
  name=${pair%%:*}; pkg=${pair#*:}
  if [ ! -f "$DIR/$name.dic" ] || [ ! -f "$DIR/$name.aff" ]; then missing+=("$pkg"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "hunspell: cs_CZ, pl_PL, sk_SK, en_US dictionaries present in $DIR"
  exit 0
fi
source "$(dirname "$0")/../lib/apt.sh"
apt_install hunspell "${missing[@]}"
ls -l "$DIR"/*.dic
