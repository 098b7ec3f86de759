package workload

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 in order, with the byte-order mark.
func utf16Bytes(s string, order binary.ByteOrder) []byte {
	units := utf16.Encode([]rune("\ufeff" + s))
	b := make([]byte, 2*len(units))
	for i, u := range units {
		order.PutUint16(b[2*i:], u)
	}
	return b
}

// A UTF-16 trace with its byte-order mark (Windows PowerShell's `>`) reads
// as the same requests as its UTF-8 text, in the CLI and the page alike
// (both read through TraceText); UTF-16 without its mark and bytes that are
// not UTF-8 are refused naming the line.
func TestTraceEncodings(t *testing.T) {
	text := "{\"arrival_s\": 0, \"prompt_tokens\": 12, \"output_tokens\": 3}\r\n{\"arrival_s\": 0.5, \"prompt_tokens\": 7, \"output_tokens\": 2, \"prefix_group\": 1, \"prefix_tokens\": 4}\r\n"
	want, err := ParseTrace(strings.NewReader(text), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"UTF-16LE":            utf16Bytes(text, binary.LittleEndian),
		"UTF-16BE":            utf16Bytes(text, binary.BigEndian),
		"UTF-8 with its mark": []byte("\ufeff" + text),
	} {
		got, err := ParseTrace(strings.NewReader(string(data)), Limits{})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, %v; want %v", name, got, err, want)
		}
		if s, err := TraceText(data); err != nil || s != text {
			t.Errorf("%s: TraceText = %q, %v", name, s, err)
		}
	}
	noMark := utf16Bytes(text, binary.LittleEndian)[2:]
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"UTF-16 without its mark", noMark, "line 1: a NUL byte: the file looks like UTF-16 without its byte-order mark"},
		{"Latin-1", []byte(text + "{\"arrival_s\": 1, \"prompt_tokens\": 1, \"output_tokens\": 1, \"caf\xe9\": 1}\n"), "line 3: byte 0xe9 is not UTF-8"},
		{"an odd UTF-16 file", append(utf16Bytes(text, binary.LittleEndian), '{'), "odd number of bytes"},
	} {
		_, err := ParseTrace(strings.NewReader(string(c.data)), Limits{})
		if _, ok := err.(*TraceError); !ok || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a TraceError with %q", c.name, err, c.want)
		}
	}
}
