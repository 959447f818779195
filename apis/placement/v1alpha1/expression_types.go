package v1alpha1

// Expressions are trees of operators. A CRD's structural schema cannot
// refer to itself, so each level of the tree is a type of its own, down to
// PathExpression, which can only read a path: five levels, two more than
// the deepest of the seed's examples (Not of Equal of Path). The function
// checks the same rules again (internal/function/placement/combine) on what it decodes.

// ExpressionOp is an expression's operator.
// +kubebuilder:validation:Enum=Path;Not;Equal;And;Or
type ExpressionOp string

// Operators.
const (
	OpPath  ExpressionOp = "Path"
	OpNot   ExpressionOp = "Not"
	OpEqual ExpressionOp = "Equal"
	OpAnd   ExpressionOp = "And"
	OpOr    ExpressionOp = "Or"
)

// Expression is an operator over a row: Path reads a field, Not negates one argument, Equal compares two, And and Or combine one or more.
//
// +kubebuilder:validation:XValidation:rule="self.op == 'Path' ? has(self.path) && !has(self.args) : !has(self.path)",message="op Path takes a path and no args; the other ops take args and no path"
// +kubebuilder:validation:XValidation:rule="self.op != 'Not' || (has(self.args) && size(self.args) == 1)",message="op Not takes exactly one arg"
// +kubebuilder:validation:XValidation:rule="self.op != 'Equal' || (has(self.args) && size(self.args) == 2)",message="op Equal takes exactly two args"
// +kubebuilder:validation:XValidation:rule="!(self.op in ['And', 'Or']) || (has(self.args) && size(self.args) >= 1)",message="ops And and Or take at least one arg"
type Expression struct {
	// Op is the operator.
	Op ExpressionOp `json:"op"`

	// Path to read, for op Path: the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name) and
	// propagation (stale): $.status.phase, $.inventory.name.
	// +optional
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path,omitempty"`

	// Args of Not (one), Equal (two), And and Or (one or more).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Args []Expression2 `json:"args,omitempty"`
}

// Expression2 is an argument at depth 2 of an Expression.
//
// +kubebuilder:validation:XValidation:rule="self.op == 'Path' ? has(self.path) && !has(self.args) : !has(self.path)",message="op Path takes a path and no args; the other ops take args and no path"
// +kubebuilder:validation:XValidation:rule="self.op != 'Not' || (has(self.args) && size(self.args) == 1)",message="op Not takes exactly one arg"
// +kubebuilder:validation:XValidation:rule="self.op != 'Equal' || (has(self.args) && size(self.args) == 2)",message="op Equal takes exactly two args"
// +kubebuilder:validation:XValidation:rule="!(self.op in ['And', 'Or']) || (has(self.args) && size(self.args) >= 1)",message="ops And and Or take at least one arg"
type Expression2 struct {
	// Op is the operator.
	Op ExpressionOp `json:"op"`

	// Path to read, for op Path: the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name) and
	// propagation (stale): $.status.phase, $.inventory.name.
	// +optional
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path,omitempty"`

	// Args of Not (one), Equal (two), And and Or (one or more).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Args []Expression3 `json:"args,omitempty"`
}

// Expression3 is an argument at depth 3 of an Expression.
//
// +kubebuilder:validation:XValidation:rule="self.op == 'Path' ? has(self.path) && !has(self.args) : !has(self.path)",message="op Path takes a path and no args; the other ops take args and no path"
// +kubebuilder:validation:XValidation:rule="self.op != 'Not' || (has(self.args) && size(self.args) == 1)",message="op Not takes exactly one arg"
// +kubebuilder:validation:XValidation:rule="self.op != 'Equal' || (has(self.args) && size(self.args) == 2)",message="op Equal takes exactly two args"
// +kubebuilder:validation:XValidation:rule="!(self.op in ['And', 'Or']) || (has(self.args) && size(self.args) >= 1)",message="ops And and Or take at least one arg"
type Expression3 struct {
	// Op is the operator.
	Op ExpressionOp `json:"op"`

	// Path to read, for op Path: the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name) and
	// propagation (stale): $.status.phase, $.inventory.name.
	// +optional
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path,omitempty"`

	// Args of Not (one), Equal (two), And and Or (one or more).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Args []Expression4 `json:"args,omitempty"`
}

// Expression4 is an argument at depth 4 of an Expression.
//
// +kubebuilder:validation:XValidation:rule="self.op == 'Path' ? has(self.path) && !has(self.args) : !has(self.path)",message="op Path takes a path and no args; the other ops take args and no path"
// +kubebuilder:validation:XValidation:rule="self.op != 'Not' || (has(self.args) && size(self.args) == 1)",message="op Not takes exactly one arg"
// +kubebuilder:validation:XValidation:rule="self.op != 'Equal' || (has(self.args) && size(self.args) == 2)",message="op Equal takes exactly two args"
// +kubebuilder:validation:XValidation:rule="!(self.op in ['And', 'Or']) || (has(self.args) && size(self.args) >= 1)",message="ops And and Or take at least one arg"
type Expression4 struct {
	// Op is the operator.
	Op ExpressionOp `json:"op"`

	// Path to read, for op Path: the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name) and
	// propagation (stale): $.status.phase, $.inventory.name.
	// +optional
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path,omitempty"`

	// Args of Not (one), Equal (two), And and Or (one or more).
	// +optional
	// +kubebuilder:validation:MaxItems=8
	Args []PathExpression `json:"args,omitempty"`
}

// PathOp is the one operator of the deepest level.
// +kubebuilder:validation:Enum=Path
type PathOp string

// PathExpression is the deepest argument of an Expression: a path.
type PathExpression struct {
	// Op is the operator; at this depth only Path.
	Op PathOp `json:"op"`

	// Path to read, the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name) and
	// propagation (stale): $.status.phase, $.inventory.name.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path"`
}
