package hardware

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// CustomModelPrefix starts the id of every model a reader brings from a
// Hugging Face config.json (package core/modelconfig builds the Model):
// "custom:my-llama". Built-in ids never contain a colon, so the two cannot
// collide.
const CustomModelPrefix = "custom:"

// customModels holds the models registered with RegisterCustomModel. A
// lesson looks its model knob up with ModelByID, which consults this set
// too, so a registered model reaches every lesson without the lesson
// naming it. The lock makes registration safe from concurrent callers (a
// test, a server); a run reads the set once, when it resolves its model.
var customModels = struct {
	sync.Mutex
	byID map[string]Model
}{byID: map[string]Model{}}

// RegisterCustomModel makes m resolvable by ModelByID (and AnyModelByID)
// under m.ID, which must start with CustomModelPrefix. Registering an id
// again replaces the earlier model. The shape is checked for the figures
// every cost model divides by; the parser in core/modelconfig checks the
// full config first and names the offending field.
func RegisterCustomModel(m Model) error {
	name, ok := strings.CutPrefix(m.ID, CustomModelPrefix)
	if !ok || name == "" {
		return fmt.Errorf("hardware: custom model id %q, want %s followed by a name", m.ID, CustomModelPrefix)
	}
	if m.Layers < 1 || m.Hidden < 1 || m.QHeads < 1 || m.KVHeads < 1 || m.HeadDim < 1 || m.Intermediate < 1 || m.Vocab < 1 || m.MaxPositions < 1 || m.Params < 1 {
		return fmt.Errorf("hardware: custom model %q has layers=%d, hidden=%d, heads=%d, kv_heads=%d, head_dim=%d, intermediate=%d, vocab=%d, positions=%d, params=%d: want all ≥ 1",
			m.ID, m.Layers, m.Hidden, m.QHeads, m.KVHeads, m.HeadDim, m.Intermediate, m.Vocab, m.MaxPositions, m.Params)
	}
	m.Sources = slices.Clone(m.Sources)
	customModels.Lock()
	defer customModels.Unlock()
	customModels.byID[m.ID] = m
	return nil
}

// UnregisterCustomModel forgets the custom model with the given id; an id
// never registered is ignored.
func UnregisterCustomModel(id string) {
	customModels.Lock()
	defer customModels.Unlock()
	delete(customModels.byID, id)
}

// registeredCustomModels returns the registered models in id order, each a
// fresh copy (ModelByID's callers may modify what it returns).
func registeredCustomModels() []Model {
	customModels.Lock()
	defer customModels.Unlock()
	out := make([]Model, 0, len(customModels.byID))
	for _, id := range slices.Sorted(maps.Keys(customModels.byID)) {
		m := customModels.byID[id]
		m.Sources = slices.Clone(m.Sources)
		out = append(out, m)
	}
	return out
}
