module github.com/inferlab/inferlab

go 1.26

require (
	github.com/agnivade/levenshtein v1.2.2
	github.com/andybalholm/brotli v1.2.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/go-echarts/go-echarts/v2 v2.6.7
	github.com/maxence-charriere/go-app/v10 v10.1.11
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/uuid v1.6.0 // indirect
)
