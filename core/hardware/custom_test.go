package hardware

import (
	"errors"
	"strings"
	"testing"
)

func TestRegisterCustomModel(t *testing.T) {
	m := MustModel("llama-3.1-8b")
	m.ID, m.Name, m.Sources = CustomModelPrefix+"mine", "mine", []string{"config.json"}
	for _, bad := range []func(*Model){
		func(x *Model) { x.ID = "mine" },            // no prefix: could shadow a built-in id
		func(x *Model) { x.ID = CustomModelPrefix }, // no name
		func(x *Model) { x.KVHeads = 0 },            // every cost model divides by it
		func(x *Model) { x.Params = 0 },
	} {
		x := m
		bad(&x)
		if err := RegisterCustomModel(x); err == nil {
			UnregisterCustomModel(x.ID)
			t.Errorf("registered %+v", x)
		}
	}
	if err := RegisterCustomModel(m); err != nil {
		t.Fatal(err)
	}
	defer UnregisterCustomModel(m.ID)
	got, err := ModelByID("custom:mine")
	if err != nil || got.KVBytesPerToken(2) != 131072 || got.Name != "mine" {
		t.Fatalf("ModelByID: %+v, %v", got, err)
	}
	got.Sources[0] = "changed" // a caller's copy, not the registry's
	if again, _ := AnyModelByID("custom:mine"); again.Sources[0] != "config.json" {
		t.Errorf("the registry's model changed with a caller's copy: %v", again.Sources)
	}
	if _, err := ModelByID("custom:other"); !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), "custom:mine") {
		t.Errorf("unknown id: %v, want ErrUnknownProfile listing the registered id", err)
	}
	UnregisterCustomModel(m.ID)
	if _, err := ModelByID("custom:mine"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("after unregistering: %v", err)
	}
	if err := RegisterCustomModel(m); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(Models(), SizingModels()...) {
		if strings.HasPrefix(b.ID, CustomModelPrefix) {
			t.Errorf("the built-in list has %s: a custom model is resolvable, not a profile", b.ID)
		}
	}
}
