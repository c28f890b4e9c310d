#!/bin/sh
# Development corpus for plain-text definition entries: manual pages rendered to text by man(1)
# (no hyphenation, no justification) and GNU Info files as installed by Debian (man-db, openssh-client, less, tar, gzip, sed, time).
# Usage: sh bench/plaindefs/make_corpus.sh [DIR]   (default ~/.cache/citewise/plaindefs)
set -e
out=${1:-$HOME/.cache/citewise/plaindefs}
mkdir -p "$out"
for page in ssh_config less tar gzip; do
  MANWIDTH=90 man --nh --nj -P cat "$page" 2>/dev/null | col -bx > "$out/$page.txt"
done
for info in sed time gzip; do
  zcat "/usr/share/info/$info.info.gz" > "$out/$info-info.txt"
done
ls -l "$out"
