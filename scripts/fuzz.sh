#!/bin/sh
# Fuzz every parser of untrusted bytes for SECONDS each (default 20; the PDF loader twice as long), each from
# its seeds: the sample corpus, fuzz/seeds/<target>/, and a minimal DOCX written here. Needs cargo-fuzz
# (`cargo install cargo-fuzz`); a crash stops the script and leaves the input in fuzz/artifacts/.
#   scripts/fuzz.sh 20        # what CI runs
#   scripts/fuzz.sh 600       # the longer run docs/benchmarks.md records
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-20}
seeds="$(mktemp -d)"
trap 'rm -rf "$seeds"' EXIT
mkdir -p "$seeds/pdf_load" "$seeds/text_decode" "$seeds/markdown_load" "$seeds/html_load" "$seeds/docx_load"
cp examples/corpus/*.pdf "$seeds/pdf_load/"
cp examples/corpus/*.md examples/corpus/*.txt "$seeds/text_decode/"
cp examples/corpus/*.md "$seeds/markdown_load/"
cp examples/corpus/*.html examples/pdf-src/*.html "$seeds/html_load/"
python3 - "$seeds/docx_load/minimal.docx" <<'PY'
import sys, zipfile
body = ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Pump Guide</w:t></w:r></w:p>'
        '<w:p><w:r><w:t>Maximum pressure is 4.5 bar. 保修期为二十四个月。</w:t></w:r></w:p></w:body></w:document>')
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
               '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
               'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
    z.writestr("_rels/.rels", '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
               '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
               'officeDocument" Target="word/document.xml"/></Relationships>')
    z.writestr("word/document.xml", body)
PY
for target in provider_reply judge_reply records dataset_rows; do
  mkdir -p "$seeds/$target"
  cp fuzz/seeds/"$target"/* "$seeds/$target/"
done
fuzz() {
  target=$1 time=$2
  RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz --sanitizer none "$target" "$seeds/$target" -- \
    -max_total_time="$time" -rss_limit_mb=4096 -timeout=20
}
fuzz pdf_load $((seconds * 2))
for target in text_decode docx_load html_load markdown_load provider_reply judge_reply records dataset_rows; do
  fuzz "$target" "$seconds"
done
