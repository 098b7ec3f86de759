# syntax=docker/dockerfile:1
# Inference Lab: builds app.wasm + the native server, ships them on debian:bookworm-slim.
#   docker build -t inferlab . && docker run --rm -p 8080:8080 inferlab
# then open http://127.0.0.1:8080/ (another host port: -p 8081:8080).

# 1. npm packages (ECharts is copied into web/ at build time; no CDN at run time).
FROM node:20-bookworm-slim AS npm
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# 2. Go: the browser entries (GOOS=js GOARCH=wasm: the page, and the simulation worker), the
#    native binary, and both wasm files precompressed (brotli at its best quality, a few minutes;
#    gzip) for the server to send as they are.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=npm /src/node_modules/echarts/dist/echarts.common.min.js web/echarts.min.js
RUN GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o web/app.wasm ./wasm \
 && GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o web/sim.wasm ./wasm/sim \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/inferlab ./cmd/inferlab \
 && bin/inferlab compress --quality 11 web/app.wasm web/sim.wasm

# 3. Runtime: the binary and the static resources only, run by an unprivileged user.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin inferlab
WORKDIR /app
COPY --from=build /src/bin/inferlab /app/inferlab
COPY --from=build /src/web /app/web
USER inferlab
EXPOSE 8080
# The image has no curl: the binary checks itself (GET / on the loopback, 200 within 5 s).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/app/inferlab", "health", "--addr", "127.0.0.1:8080"]
# The same server and defaults as `make run`, except the address: inside the container it
# listens on every interface (0.0.0.0), because `docker run -p` forwards to the container's
# network interface, not to its loopback; 127.0.0.1 in here would be unreachable from the host.
# Publish it on the host's loopback only with -p 127.0.0.1:8080:8080.
CMD ["/app/inferlab", "serve", "--addr", "0.0.0.0:8080", "--web", "/app/web"]
