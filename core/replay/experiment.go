package replay

import (
	"encoding/json"

	"github.com/inferlab/inferlab/core/hardware"
	"github.com/inferlab/inferlab/core/modelconfig"
	"github.com/inferlab/inferlab/core/workload"
)

// Tokenizer is what the workload's lengths depend on: the tokens the
// server counts per random token inference-perf drew (decoded and encoded
// again), and the BOS tokens it adds in front.
type Tokenizer struct {
	Name   string
	Growth float64
	BOS    int
}

// Tokenizers the lab knows, by the config.json that names them: the
// SentencePiece tokenizers of Llama 2 (and CodeLlama, which adds 16
// special tokens that skip_special_tokens drops) and of Mistral and
// Mixtral, each with its BOS token. Growth is fitted on the measured mean
// prompt lengths (docs/SOURCES.md#retokenisation).
var (
	Llama2Tokenizer  = Tokenizer{Name: "Llama 2 SentencePiece (32,000 tokens)", Growth: 1.0472, BOS: 1}
	MistralTokenizer = Tokenizer{Name: "Mistral SentencePiece (32,000 tokens)", Growth: 1.0405, BOS: 1}
)

// TokenizerFor returns the tokenizer of a config.json's model_type and
// vocab_size, and false for one the lab has no figures for.
func TokenizerFor(modelType string, vocab int) (Tokenizer, bool) {
	switch {
	case modelType == "llama" && (vocab == 32000 || vocab == 32016):
		return Llama2Tokenizer, true
	case (modelType == "mistral" || modelType == "mixtral") && vocab == 32000:
		return MistralTokenizer, true
	}
	return Tokenizer{}, false
}

// ConfigJSON is a config.json holding the shape's fields: what the lab
// reads of the model's own.
func (s Shape) ConfigJSON(name string) []byte {
	m := map[string]any{
		"_name_or_path": name, "model_type": s.Type,
		"num_hidden_layers": s.Layers, "hidden_size": s.Hidden,
		"num_attention_heads": s.Heads, "num_key_value_heads": s.KVHeads,
		"intermediate_size": s.Intermediate, "vocab_size": s.Vocab,
		"max_position_embeddings": s.Positions, "tie_word_embeddings": false,
	}
	if s.Experts > 0 {
		m["num_local_experts"], m["num_experts_per_tok"] = s.Experts, s.ExpertsPerToken
	}
	b, _ := json.MarshalIndent(m, "", "  ") // a map of strings and ints always marshals
	return append(b, '\n')
}

// Experiment is the measured run as an experiment on g.
func (m MeasuredRun) Experiment(g hardware.GPU) (Experiment, error) {
	c, err := modelconfig.Parse(m.Shape.ConfigJSON(m.Model), m.Model)
	if err != nil {
		return Experiment{}, err
	}
	tok, _ := TokenizerFor(m.Shape.Type, m.Shape.Vocab)
	w := workload.InferencePerf{Data: m.Data, Interval: 1, Timeout: workload.DefaultClientTimeout, Growth: tok.Growth, BOS: tok.BOS}
	for _, s := range m.Stages {
		w.Stages = append(w.Stages, workload.LoadStage{Rate: s.Rate, Duration: s.Duration})
	}
	return Experiment{Name: m.Name, Workload: w, Engine: Engine{GPU: g, Model: c.Model, TP: m.TP,
		MaxModelLen: m.MaxModelLen, MaxNumBatchedTokens: m.MaxNumBatchedTokens, MaxNumSeqs: m.MaxNumSeqs}}, nil
}
