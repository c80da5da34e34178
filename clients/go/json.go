package taskyard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// maxSafeInt is the largest integer a JSON number (a double on the wire)
// holds exactly; larger ones would come back changed, so they are refused.
const maxSafeInt = 1 << 53

// toValue converts a Go value to a JSON value the way encoding/json would:
// nil, bools, numbers, strings, slices, maps with string keys, and anything
// else through its JSON encoding (structs with tags, json.Marshaler, ...).
// path names the value in errors, e.g. "task.args[1]".
func toValue(v any, path string) (*structpb.Value, error) {
	switch x := v.(type) {
	case nil:
		return structpb.NewNullValue(), nil
	case bool:
		return structpb.NewBoolValue(x), nil
	case string:
		if !utf8.ValidString(x) {
			return nil, errorf(path, "string is not valid UTF-8")
		}
		return structpb.NewStringValue(x), nil
	case int:
		return intValue(int64(x), path)
	case int8:
		return intValue(int64(x), path)
	case int16:
		return intValue(int64(x), path)
	case int32:
		return intValue(int64(x), path)
	case int64:
		return intValue(x, path)
	case uint:
		return uintValue(uint64(x), path)
	case uint8:
		return uintValue(uint64(x), path)
	case uint16:
		return uintValue(uint64(x), path)
	case uint32:
		return uintValue(uint64(x), path)
	case uint64:
		return uintValue(x, path)
	case float32:
		return floatValue(float64(x), path)
	case float64:
		return floatValue(x, path)
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return intValue(i, path)
		}
		if isDigits(strings.TrimPrefix(string(x), "-")) {
			// ParseFloat would take it, rounded; it is beyond int64, so beyond 2^53.
			return nil, errorf(path, "integer %s is beyond 2^53: it would not come back exact", string(x))
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, errorf(path, "%q is not a number", string(x))
		}
		return floatValue(f, path)
	case []any:
		l, err := toList(x, path)
		if err != nil {
			return nil, err
		}
		return structpb.NewListValue(l), nil
	case map[string]any:
		s, err := toStruct(x, path)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	case *structpb.Value:
		return x, nil
	}
	return viaJSON(v, path)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func intValue(i int64, path string) (*structpb.Value, error) {
	if i > maxSafeInt || i < -maxSafeInt {
		return nil, errorf(path, "integer %d is beyond 2^53: it would not come back exact", i)
	}
	return structpb.NewNumberValue(float64(i)), nil
}

func uintValue(u uint64, path string) (*structpb.Value, error) {
	if u > maxSafeInt {
		return nil, errorf(path, "integer %d is beyond 2^53: it would not come back exact", u)
	}
	return structpb.NewNumberValue(float64(u)), nil
}

func floatValue(f float64, path string) (*structpb.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errorf(path, "%v is not a JSON number", f)
	}
	return structpb.NewNumberValue(f), nil
}

// viaJSON handles the types the switch does not know (typed slices and maps,
// structs) through their JSON encoding, so json tags and Marshalers apply.
func viaJSON(v any, path string) (*structpb.Value, error) {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return structpb.NewNullValue(), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, errorf(path, "not JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, errorf(path, "not JSON: %v", err)
	}
	return toValue(generic, path)
}

func toList(items []any, path string) (*structpb.ListValue, error) {
	l := &structpb.ListValue{Values: make([]*structpb.Value, len(items))}
	for i, item := range items {
		v, err := toValue(item, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		l.Values[i] = v
	}
	return l, nil
}

func toStruct(m map[string]any, path string) (*structpb.Struct, error) {
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, item := range m {
		if !utf8.ValidString(k) {
			return nil, errorf(path, "key %q is not valid UTF-8", k)
		}
		v, err := toValue(item, path+"."+k)
		if err != nil {
			return nil, err
		}
		s.Fields[k] = v
	}
	return s, nil
}

// fromValue converts a JSON value to what encoding/json would decode into an
// any: nil, bool, float64, string, []any or map[string]any.
func fromValue(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	return v.AsInterface()
}

func fromList(l *structpb.ListValue) []any {
	if l == nil {
		return nil
	}
	return l.AsSlice()
}

func fromStruct(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

// decodeValue unmarshals a JSON value into out, as json.Unmarshal would.
func decodeValue(v *structpb.Value, out any) error {
	data := []byte("null")
	if v != nil {
		var err error
		if data, err = protojson.Marshal(v); err != nil {
			return err
		}
	}
	return json.Unmarshal(data, out)
}
