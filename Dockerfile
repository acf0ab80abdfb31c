# Build
FROM rust:1.95-bookworm AS build
# Node 20 builds the web client (web/app) and the GraphiQL bundle (web/graphiql), each
# pinned by its lock file; Debian's own nodejs is too old for Vite.
COPY --from=node:20-bookworm-slim /usr/local/bin/node /usr/local/bin/node
COPY --from=node:20-bookworm-slim /usr/local/lib/node_modules /usr/local/lib/node_modules
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin verdict && test -s web/graphiql/dist/graphiql.js \
    && test -s web/app/dist/index.html

# Run: a small image with just the binary. SQLite lives on the /data volume unless
# VERDICT_DATABASE_URL points at PostgreSQL.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --home /data verdict && mkdir -p /data && chown verdict /data
COPY --from=build /src/target/release/verdict /usr/local/bin/verdict
USER verdict
WORKDIR /data
VOLUME /data
ENV VERDICT_ADDR=0.0.0.0:8080 \
    VERDICT_DATABASE_URL=sqlite:///data/verdict.db?mode=rwc \
    VERDICT_KEY_FILE=/data/verdict-signing.key
EXPOSE 8080
ENTRYPOINT ["verdict"]
CMD ["serve"]
