# ragtester in a container: a release build, then a slim image with the binary, a Chinese font (generated
# Chinese documents are typeset as PDFs) and CA certificates (hosted models over HTTPS). Runs the demo by
# default; mount a folder to keep its report:
#
#   docker build -t ragtester .
#   docker run --rm -v "$PWD/out:/work" ragtester                      # the demo, report in out/demo-out/
#   docker run --rm -v "$PWD:/work" ragtester test --config ragtester.toml --out run1
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p ragtester

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates fonts-wqy-microhei fontconfig \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/ragtester /usr/local/bin/ragtester
WORKDIR /work
ENTRYPOINT ["ragtester"]
CMD ["demo", "--out", "demo-out"]
