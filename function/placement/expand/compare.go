package expand

import (
	"errors"
	"fmt"
	"reflect"
)

// The comparisons a template may make (eq, ne, lt, le, gt, ge), in place
// of text/template's own: the same answers for everything a template
// here can hold (properties and their values, which are strings, and
// literals: booleans, numbers, strings), but paying for the strings they
// compare, which the builtins compare for free. A template may compare
// two 64 KiB strings on every iteration of two nested ranges.

// class is how a value compares: values of one class only with each
// other.
type class int

const (
	classOther class = iota
	classBool
	classInt
	classFloat
	classComplex
	classString
)

func classOf(v reflect.Value) class {
	switch v.Kind() {
	case reflect.Bool:
		return classBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return classInt
	case reflect.Float32, reflect.Float64:
		return classFloat
	case reflect.Complex64, reflect.Complex128:
		return classComplex
	case reflect.String:
		return classString
	default:
		// Unsigned numbers too: no template here can make one.
		return classOther
	}
}

var (
	errNoOperand     = errors.New("missing argument for comparison")
	errNotComparable = errors.New("invalid type for comparison")
)

// operand is v without the interface it may arrive in.
func operand(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		return v.Elem()
	}
	return v
}

// pay spends what comparing the operands may read: their strings.
func (b *Budget) pay(vs ...reflect.Value) error {
	var n int64
	for _, v := range vs {
		if v = operand(v); v.Kind() == reflect.String {
			n += int64(v.Len())
		}
		n++
	}
	return b.spend(n)
}

// equal is a == b for two operands of one class.
func equal(a, b reflect.Value) (bool, error) {
	ca, cb := classOf(a), classOf(b)
	switch {
	case !a.IsValid() || !b.IsValid():
		// nil equals nil only, and is no error to compare.
		return a.IsValid() == b.IsValid(), nil
	case ca != cb:
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
	case ca == classBool:
		return a.Bool() == b.Bool(), nil
	case ca == classInt:
		return a.Int() == b.Int(), nil
	case ca == classFloat:
		return a.Float() == b.Float(), nil
	case ca == classComplex:
		return a.Complex() == b.Complex(), nil
	case ca == classString:
		return a.String() == b.String(), nil
	}
	return false, errNotComparable
}

// less is a < b for two operands of one ordered class.
func less(a, b reflect.Value) (bool, error) {
	ca, cb := classOf(a), classOf(b)
	switch {
	case ca == classOther || cb == classOther || ca == classBool || ca == classComplex:
		return false, errNotComparable
	case ca != cb:
		return false, fmt.Errorf("incompatible types for comparison: %v and %v", a.Type(), b.Type())
	case ca == classInt:
		return a.Int() < b.Int(), nil
	case ca == classFloat:
		return a.Float() < b.Float(), nil
	}
	return a.String() < b.String(), nil
}

// comparisons are the template's eq, ne, lt, le, gt and ge.
func (b *Budget) comparisons() map[string]any {
	eq := func(x reflect.Value, ys ...reflect.Value) (bool, error) {
		if len(ys) == 0 {
			return false, errNoOperand
		}
		if err := b.pay(x); err != nil {
			return false, err
		}
		if err := b.pay(ys...); err != nil {
			return false, err
		}
		x = operand(x)
		for _, y := range ys {
			if ok, err := equal(x, operand(y)); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	lt := func(x, y reflect.Value) (bool, error) {
		if err := b.pay(x, y); err != nil {
			return false, err
		}
		return less(operand(x), operand(y))
	}
	le := func(x, y reflect.Value) (bool, error) {
		if ok, err := lt(x, y); ok || err != nil {
			return ok, err
		}
		return eq(x, y)
	}
	return map[string]any{
		"eq": eq,
		"ne": func(x, y reflect.Value) (bool, error) {
			ok, err := eq(x, y)
			return !ok, err
		},
		"lt": lt,
		"le": le,
		"gt": func(x, y reflect.Value) (bool, error) {
			ok, err := le(x, y)
			return !ok && err == nil, err
		},
		"ge": func(x, y reflect.Value) (bool, error) {
			ok, err := lt(x, y)
			return !ok && err == nil, err
		},
	}
}
