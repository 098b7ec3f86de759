package lessons

import (
	"errors"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestZZProbeCorners(t *testing.T) {
	slugs := strings.Split(os.Getenv("PROBE"), ",")
	variants := []map[string]string{{"tp": "8"}, {"weight_dtype": "fp8"}, {"tp": "8", "weight_dtype": "fp8"}}
	if os.Getenv("VARIANTS") == "pd" {
		variants = []map[string]string{{"prefill_tp": "8", "decode_tp": "8"}, {"weight_dtype": "fp8"}, {"prefill_tp": "1", "decode_tp": "8"}}
	}
	for _, l := range All() {
		for _, sl := range slugs {
			if l.Slug != sl {
				continue
			}
			for _, c := range l.HeavyCorners {
				for _, va := range variants {
					set := maps.Clone(c)
					maps.Copy(set, va)
					s, _, err := l.Run(set)
					var pe *ParamError
					if errors.As(err, &pe) {
						p, _ := l.Param(pe.Key)
						if p.Kind == Choice {
							t.Logf("%s %v: %v", l.Slug, set, err)
							continue
						}
						hi, _ := strconv.ParseFloat(set[pe.Key], 64)
						if set[pe.Key] == "" {
							hi = p.Default
						}
						lo := p.Min
						for range 12 {
							mid := lo + (hi-lo)/2
							if p.Kind == Int {
								mid = float64(int(mid))
							}
							set[pe.Key] = strconv.FormatFloat(mid, 'f', -1, 64)
							if _, _, e := l.Run(set); e == nil {
								lo = mid
							} else {
								hi = mid
							}
						}
						set[pe.Key] = strconv.FormatFloat(lo, 'f', -1, 64)
						s, _, err = l.Run(set)
					}
					if err != nil {
						t.Logf("%s %v: %v", l.Slug, set, err)
						continue
					}
					t.Logf("%s %v: work %d (max %d)", l.Slug, set, s.Work, l.MaxWork)
				}
			}
		}
	}
}
