#!/bin/sh
# Renders the PDFs of the sample corpus from these HTML sources with headless Chromium (Debian's `chromium`;
# the Chinese document needs the `fonts-wqy-microhei` package). Run from this folder; the PDFs are committed so
# the demo needs neither tool.
set -eu
for name in cedar-valley-water-report xinghai-cold-chain-guide; do
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --no-first-run --no-pdf-header-footer --print-to-pdf="../corpus/$name.pdf" "file://$PWD/$name.html"
done
