# Build
FROM rust:1.95-bookworm AS build
# Node builds the self-hosted GraphiQL bundle (web/graphiql, pinned by its lock file).
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin verdict && test -s web/graphiql/dist/graphiql.js

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
