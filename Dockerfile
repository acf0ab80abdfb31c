# Verdict's container image. Two ways to build it, one runtime stage:
#
#   docker build -t verdict .          # normal: compile in the `build` stage (needs a registry
#                                      # for rust:1.95-bookworm and node:20-bookworm-slim)
#   podman build --target prebuilt --build-arg RUNTIME_BASE=localhost/verdict-base:... \
#       -f Dockerfile DIR              # DIR holds only a `verdict` binary built on the host
#
# The second is what `deploy/image-check` does where no registry can be reached: the runtime
# base is a Debian bookworm root filesystem made from Debian's packages (mmdebstrap) and the
# binary is the host's build of the same checkout (see deploy/README.md). The stages are
# ordered so that `--target prebuilt` never reaches the Rust stage, and the default target
# (the last stage, `release`) never needs the prebuilt binary; BuildKit and buildah skip the
# stages a target does not use.

# The runtime's base: any Debian bookworm (glibc 2.36) with bash and useradd.
ARG RUNTIME_BASE=debian:bookworm-slim
ARG RUST_IMAGE=rust:1.95-bookworm
ARG NODE_IMAGE=node:20-bookworm-slim

# Run: a small image with just the binary. SQLite lives on the /data volume unless
# VERDICT_DATABASE_URL points at PostgreSQL.
FROM ${RUNTIME_BASE} AS runtime
RUN useradd --system --uid 10001 --home /data verdict && mkdir -p /data && chown verdict /data
WORKDIR /data
VOLUME /data
ENV VERDICT_ADDR=0.0.0.0:8080 \
    VERDICT_DATABASE_URL=sqlite:///data/verdict.db?mode=rwc \
    VERDICT_KEY_FILE=/data/verdict-signing.key
EXPOSE 8080
# `docker stop` sends SIGTERM: verdict stops accepting, finishes in-flight requests, closes
# websockets with 1001 and exits 0 (deploy/image-check holds it to that).
STOPSIGNAL SIGTERM
ENTRYPOINT ["verdict"]
CMD ["serve"]

# The runtime with a binary built outside (the build context holds just `verdict`).
FROM runtime AS prebuilt
COPY --chmod=0755 verdict /usr/local/bin/verdict
USER verdict

# Build
FROM ${NODE_IMAGE} AS node
FROM ${RUST_IMAGE} AS build
# Node 20 builds the web client (web/app) and the GraphiQL bundle (web/graphiql), each
# pinned by its lock file; Debian's own nodejs is too old for Vite.
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin verdict && test -s web/graphiql/dist/graphiql.js \
    && test -s web/app/dist/index.html

# The default target: the runtime with the binary of the build stage.
FROM runtime AS release
COPY --from=build /src/target/release/verdict /usr/local/bin/verdict
USER verdict
