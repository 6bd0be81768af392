// Command argsinfo is built by kplugin, outside the project's tree, to learn what the
// project's plugins take as args: for each plugin registered in pkg/registry it reports
// whether it registered an args decoder, the fields of its Args type (by reflection),
// its defaults (its own decoder given no args) and, for the args on stdin, what its own
// decoder makes of them: the defaulted Args, or the decoder's error.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"{{ module }}/pkg/registry"
{% for package in packages %}
	_ "{{ module }}/pkg/{{ package }}"
{% endfor %}
)

type field struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	Go     string  `json:"go"`
	Fields []field `json:"fields,omitempty"`
	Elem   *field  `json:"elem,omitempty"`
}

type report struct {
	Args          bool            `json:"args"`
	Type          string          `json:"type,omitempty"`
	Fields        []field         `json:"fields,omitempty"`
	Defaults      json.RawMessage `json:"defaults,omitempty"`
	DefaultsError string          `json:"defaultsError,omitempty"`
	Decoded       json.RawMessage `json:"decoded,omitempty"`
	Error         string          `json:"error,omitempty"`
}

func main() {
	input := map[string]json.RawMessage{}
	if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
		fmt.Fprintln(os.Stderr, "reading the args to check:", err)
		os.Exit(2)
	}
	out := map[string]report{}
	for _, name := range registry.Names() {
		decode := registry.Args(name)
		if decode == nil {
			out[name] = report{}
			continue
		}
		r := report{Args: true}
		if defaults, err := decode(nil); err != nil {
			r.DefaultsError = err.Error()
		} else {
			r.Defaults = encode(defaults)
			r.Type, r.Fields = describe(reflect.TypeOf(defaults))
		}
		if raw, ok := input[name]; ok {
			decoded, err := decode(&runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON})
			if err != nil {
				r.Error = err.Error()
			} else {
				r.Decoded = encode(decoded)
				if r.Type == "" {
					r.Type, r.Fields = describe(reflect.TypeOf(decoded))
				}
			}
		}
		out[name] = r
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func encode(obj runtime.Object) json.RawMessage {
	data, err := json.Marshal(obj)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"kpluginError": err.Error()})
	}
	return data
}

// describe names a type and lists the JSON fields of a struct, as encoding/json sees them.
func describe(t reflect.Type) (string, []field) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name(), fields(t, 0)
}

func fields(t reflect.Type, depth int) []field {
	var out []field
	if t.Kind() != reflect.Struct || depth > 8 {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			if f.Type.String() != "v1.TypeMeta" {
				out = append(out, fields(f.Type, depth+1)...)
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, describeField(name, f.Type, depth))
	}
	return out
}

func describeField(name string, t reflect.Type, depth int) field {
	f := field{Name: name, Go: t.String()}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler):
		f.Type = "string" // a quantity, a duration: written as text
	case t.Kind() == reflect.String:
		f.Type = "string"
	case t.Kind() == reflect.Bool:
		f.Type = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		f.Type = "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		f.Type = "number"
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		f.Type = "list"
		elem := describeField("", t.Elem(), depth+1)
		f.Elem = &elem
	case t.Kind() == reflect.Map:
		f.Type = "map"
		elem := describeField("", t.Elem(), depth+1)
		f.Elem = &elem
	case t.Kind() == reflect.Struct:
		f.Type = "object"
		f.Fields = fields(t, depth+1)
	default:
		f.Type = t.Kind().String()
	}
	return f
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
