# troupe: one static binary on a distroless, non-root base.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t troupe .
#   docker run --rm -it -e OPENAI_API_KEY -v troupe-data:/data troupe chat --card /cards/lantern-keeper.json
#   docker run -d -e OPENAI_API_KEY -e TROUPE_DISCORD_TOKEN -v troupe-data:/data troupe   # serve
#
# Configuration comes from TROUPE_* variables (see troupe.example.yaml), or from
# a troupe.yaml mounted into /data (the working directory), or --config FILE.

# ---------------------------------------------------------------- build
FROM golang:1.26-bookworm AS build
WORKDIR /src

# Dependencies first, so source edits do not download them again. go.mod
# replaces one module with a directory of the repository
# (internal/gosqlite), whose go.mod the download reads.
COPY go.mod go.sum ./
COPY internal/gosqlite/go.mod internal/gosqlite/go.sum internal/gosqlite/
RUN go mod download

COPY . .
ARG VERSION=
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/troupe ./cmd/troupe \
 && mkdir -p /out/data

# ---------------------------------------------------------------- runtime
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=
LABEL org.opencontainers.image.title="troupe" \
      org.opencontainers.image.description="LLM characters for Discord, Telegram and the terminal, with memory" \
      org.opencontainers.image.version="${VERSION}"

COPY --from=build /out/troupe /usr/local/bin/troupe
# The example cards are the default card library; mount your own over /cards.
COPY examples/cards/ /cards/
# The working directory holds the SQLite database (and an optional troupe.yaml);
# it belongs to the nonroot user (65532) so the database can be written.
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
VOLUME ["/data"]

ENV TROUPE_CARDS_DIR=/cards \
    TROUPE_DATABASE_DSN=sqlite:///data/troupe.db \
    TROUPE_OPS_LISTEN=0.0.0.0:9090 \
    TROUPE_WEB_LISTEN=0.0.0.0:8080 \
    TROUPE_TELEGRAM_WEBHOOK_LISTEN=0.0.0.0:8443

USER 65532:65532
# 9090: ops.listen (health and metrics); 8080: web.listen (the inspector,
# on only with TROUPE_WEB_TOKEN); 8443: telegram.webhook_listen.
EXPOSE 9090 8080 8443
ENTRYPOINT ["/usr/local/bin/troupe"]
CMD ["serve"]
