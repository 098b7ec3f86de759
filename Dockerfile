# syntax=docker/dockerfile:1
# Inference Lab: builds app.wasm + the native server, ships them on debian:bookworm-slim.
#   docker build -t inferlab . && docker run --rm -p 8080:8080 inferlab

# 1. npm packages (ECharts is copied into web/ at build time; no CDN at run time).
FROM node:20-bookworm-slim AS npm
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# 2. Go: the browser entry (GOOS=js GOARCH=wasm) and the native binary.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=npm /src/node_modules/echarts/dist/echarts.min.js web/echarts.min.js
RUN GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o web/app.wasm ./wasm \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o bin/inferlab ./cmd/inferlab

# 3. Runtime: the binary and the static resources only.
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin inferlab
WORKDIR /app
COPY --from=build /src/bin/inferlab /app/inferlab
COPY --from=build /src/web /app/web
USER inferlab
EXPOSE 8080
CMD ["/app/inferlab", "serve", "--addr", "0.0.0.0:8080", "--web", "/app/web"]
