package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.org
spec:
  group: example.org
  names: {kind: Thing, plural: things}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        description: A Thing is
          an example.
        type: object
        properties:
          apiVersion: {type: string}
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: self.size > 0
              message: size must be positive
            properties:
              size: {type: integer, default: 3, minimum: 1, maximum: 9, description: "Size | in units."}
              mode: {type: string, enum: [A, B]}
              items:
                type: array
                maxItems: 2
                items:
                  type: object
                  properties:
                    name: {type: string, pattern: "^[a-z]+$"}
`

func TestReference(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(filepath.Join(in, "thing.yaml"), []byte(crd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(out, []string{in}, ""); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "example.org.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"`example.org/v1`, namespaced, managed resource (CRD).",
		"A Thing is an example.",
		"| `spec.size` | integer, required | `3` | Size \\| in units. From 1 to 9. |",
		"| `spec.mode` | string |  | One of `\"A\"`, `\"B\"`. |",
		"| `spec.items` | []object |  | Items at most 2. |",
		"| `spec.items[].name` | string |  | Pattern `^[a-z]+$`. |",
		"- `spec`: size must be positive (`self.size > 0`)",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	index, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), "| `example.org` | [Thing](example.org.md#thing) |") {
		t.Errorf("the index lacks the kind:\n%s", index)
	}
	// The same schemas write the same bytes.
	again := filepath.Join(t.TempDir(), "ref")
	if err := run(again, []string{in}, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(again, "example.org.md")); string(b) != string(page) {
		t.Error("the same schema wrote a different page")
	}
}

func TestReferenceRefusesWhatIsNoSchema(t *testing.T) {
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "x.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(filepath.Join(t.TempDir(), "ref"), []string{in}, ""); err == nil || !strings.Contains(err.Error(), "not a CRD or XRD") {
		t.Errorf("err = %v", err)
	}
}
