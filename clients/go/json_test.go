package taskyard

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

func TestToValueRoundTrip(t *testing.T) {
	type point struct {
		X int    `json:"x"`
		Y string `json:"y,omitempty"`
	}
	var nilPtr *point
	cases := []struct {
		in   any
		want any
	}{
		{nil, nil},
		{true, true},
		{"héllo", "héllo"},
		{3, 3.0},
		{int64(-1 << 53), float64(-1 << 53)},
		{uint8(7), 7.0},
		{float32(1.5), 1.5},
		{json.Number("12"), 12.0},
		{json.Number("0.25"), 0.25},
		{json.Number("1e20"), 1e20},
		{[]any{1, "a", nil}, []any{1.0, "a", nil}},
		{map[string]any{"k": []any{false}}, map[string]any{"k": []any{false}}},
		{[]string{"a", "b"}, []any{"a", "b"}},
		{map[string]int{"n": 2}, map[string]any{"n": 2.0}},
		{point{X: 1}, map[string]any{"x": 1.0}},
		{&point{X: 2, Y: "z"}, map[string]any{"x": 2.0, "y": "z"}},
		{nilPtr, nil},
	}
	for _, c := range cases {
		v, err := toValue(c.in, "v")
		if err != nil {
			t.Errorf("toValue(%#v): %v", c.in, err)
			continue
		}
		if got := fromValue(v); !reflect.DeepEqual(got, c.want) {
			t.Errorf("toValue(%#v) came back as %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestToValueRefuses(t *testing.T) {
	cases := []struct {
		in    any
		field string
	}{
		{math.NaN(), "v"},
		{math.Inf(1), "v"},
		{int64(1<<53 + 1), "v"},
		{uint64(math.MaxUint64), "v"},
		{json.Number("9223372036854775808"), "v"},
		{json.Number("-123456789012345678901234567890"), "v"},
		{json.Number("9007199254740993"), "v"},
		{"\xff", "v"},
		{[]any{1, []any{math.Inf(-1)}}, "v[1][0]"},
		{map[string]any{"a": map[string]any{"b": math.NaN()}}, "v.a.b"},
		{map[string]int64{"big": 1 << 60}, "v.big"},
		{make(chan int), "v"},
	}
	for _, c := range cases {
		_, err := toValue(c.in, "v")
		var terr *Error
		if !errors.As(err, &terr) {
			t.Errorf("toValue(%#v) = %v, want an *Error", c.in, err)
			continue
		}
		if _, ok := terr.Violation(c.field); !ok {
			t.Errorf("toValue(%#v): violations %+v, want one on %q", c.in, terr.Violations, c.field)
		}
	}
}

func TestFromNil(t *testing.T) {
	if fromList(nil) != nil || fromStruct(nil) != nil || fromValue(nil) != nil {
		t.Fatal("unset JSON fields must come back nil")
	}
}

func TestDecodeResult(t *testing.T) {
	task := &Task{result: structpb.NewNumberValue(5)}
	var n int
	if err := task.DecodeResult(&n); err != nil || n != 5 {
		t.Fatalf("DecodeResult = %d, %v; want 5", n, err)
	}
	var echoed struct {
		Args   []string       `json:"args"`
		Kwargs map[string]any `json:"kwargs"`
	}
	v, _ := toValue(map[string]any{"args": []any{"x"}, "kwargs": map[string]any{}}, "r")
	task = &Task{result: v}
	if err := task.DecodeResult(&echoed); err != nil || len(echoed.Args) != 1 || echoed.Args[0] != "x" {
		t.Fatalf("DecodeResult = %+v, %v", echoed, err)
	}
	var p *int
	if err := (&Task{}).DecodeResult(&p); err != nil || p != nil {
		t.Fatalf("no result should decode as null, got %v, %v", p, err)
	}
}
