#!/usr/bin/env bash
# The fuzzers' corpora. Git keeps the named seeds (fuzz/seeds/TARGET/: the examples, the labs, each input a
# fuzzer once failed on) and one archive of the minimised grown corpora (fuzz/corpus.tar.xz); the working
# corpus, fuzz/corpus/TARGET/, is built from both and is not tracked.
#
#   bash fuzz/corpus.sh unpack    # fuzz/corpus/TARGET/ = the archive's inputs + the seeds (what a run starts from)
#   bash fuzz/corpus.sh pack      # after `cargo +nightly fuzz cmin TARGET`: the grown inputs back into the archive
#   bash fuzz/corpus.sh check     # the archive unpacks, every target has inputs (the test command runs this)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

TARGETS=(expr cuda ptx sass addresses share lab engine)

unpack() {
  local into=$1
  mkdir -p "$into"
  tar -xJf corpus.tar.xz -C "$into"
  for t in "${TARGETS[@]}"; do
    mkdir -p "$into/corpus/$t"
    if [ -d "seeds/$t" ]; then cp -p "seeds/$t"/* "$into/corpus/$t/"; fi
  done
}

case "${1:-}" in
  unpack)
    unpack .
    for t in "${TARGETS[@]}"; do printf '%s: %s inputs\n' "$t" "$(ls "corpus/$t" | wc -l)"; done
    ;;
  pack)
    # Only the grown inputs (libFuzzer names them by their SHA-1); the named seeds stay in seeds/.
    find corpus -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' | LC_ALL=C sort > .pack-list
    tar -cf - -T .pack-list | xz -9 > corpus.tar.xz
    printf 'packed %s inputs into fuzz/corpus.tar.xz (%s bytes)\n' "$(wc -l < .pack-list)" "$(wc -c < corpus.tar.xz)"
    rm -f .pack-list
    ;;
  check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    unpack "$tmp"
    for t in "${TARGETS[@]}"; do
      n=$(ls "$tmp/corpus/$t" | wc -l)
      seeds=$(ls "seeds/$t" 2>/dev/null | wc -l)
      if [ "$n" -le "$seeds" ] || [ "$seeds" -eq 0 ]; then
        echo "error: fuzz target $t has $n inputs ($seeds named seeds): the archive or the seeds are missing" >&2
        exit 1
      fi
      printf '%s: %s inputs (%s named seeds)\n' "$t" "$n" "$seeds"
    done
    ;;
  *)
    echo "usage: bash fuzz/corpus.sh unpack|pack|check" >&2
    exit 2
    ;;
esac
