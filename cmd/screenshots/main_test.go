package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

// A picture of at most 256 colours comes back pixel for pixel; one of more
// keeps its most frequent colours exactly and maps the rest to the nearest.
func TestPaletted(t *testing.T) {
	enc := func(im image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, im); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	few := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			few.Set(x, y, color.RGBA{uint8(x % 16 * 16), uint8(y % 16 * 16), 90, 255}) // 256 colours
		}
	}
	out, err := paletted(enc(few))
	if err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*image.Paletted); !ok {
		t.Fatalf("re-encoded as %T, want a paletted PNG", got)
	}
	for y := 0; y < 30; y++ {
		for x := 0; x < 40; x++ {
			if a, b := color.RGBAModel.Convert(got.At(x, y)), few.At(x, y); a != b {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, a, b)
			}
		}
	}

	// 300 colours: a background (most frequent) and 299 one-pixel greys.
	many := image.NewRGBA(image.Rect(0, 0, 300, 2))
	bg := color.RGBA{15, 23, 42, 255}
	for x := 0; x < 300; x++ {
		many.Set(x, 0, bg)
		many.Set(x, 1, color.RGBA{uint8(x % 256), uint8(x % 256), uint8(x / 256 * 40), 255})
	}
	out, err = paletted(enc(many))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = png.Decode(bytes.NewReader(out))
	if pal := got.(*image.Paletted).Palette; len(pal) != 256 {
		t.Errorf("%d colours in the palette, want 256", len(pal))
	}
	if c := color.RGBAModel.Convert(got.At(7, 0)); c != bg {
		t.Errorf("the background became %v", c)
	}
	for x := 0; x < 300; x++ {
		a := color.RGBAModel.Convert(got.At(x, 1)).(color.RGBA)
		w := many.At(x, 1).(color.RGBA)
		if d := int(a.R) - int(w.R); d > 48 || d < -48 {
			t.Errorf("pixel %d: %v far from %v", x, a, w)
		}
	}
}
