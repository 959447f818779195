package v1alpha1

// Expressions are trees of operators. A CRD's structural schema cannot
// refer to itself, so each level of the tree is a type of its own, down to
// PathExpression, which can only read a path: five levels, two more than
// the deepest of the seed's examples (Not of Equal of Path). The function
// checks the same rules again (function/placement/combine) on what it decodes.

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

// Expression is an operator over a row (Path reads a field, Not negates one argument, Equal compares two, And and Or combine one or more), or a CEL expression over KubeStellar's variables.
//
// +kubebuilder:validation:XValidation:rule="has(self.op) != has(self.cel)",message="an expression is either op (the operator tree) or cel, not both and not neither"
// +kubebuilder:validation:XValidation:rule="!has(self.op) || (self.op == 'Path' ? has(self.path) && !has(self.args) : !has(self.path))",message="op Path takes a path and no args; the other ops take args and no path"
// +kubebuilder:validation:XValidation:rule="!has(self.op) || self.op != 'Not' || (has(self.args) && size(self.args) == 1)",message="op Not takes exactly one arg"
// +kubebuilder:validation:XValidation:rule="!has(self.op) || self.op != 'Equal' || (has(self.args) && size(self.args) == 2)",message="op Equal takes exactly two args"
// +kubebuilder:validation:XValidation:rule="!has(self.op) || !(self.op in ['And', 'Or']) || (has(self.args) && size(self.args) >= 1)",message="ops And and Or take at least one arg"
// +kubebuilder:validation:XValidation:rule="has(self.op) || (!has(self.path) && !has(self.args))",message="a cel expression takes no path and no args"
type Expression struct {
	// Op is the operator; or set cel instead.
	// +optional
	Op ExpressionOp `json:"op,omitempty"`

	// CEL is an expression in the Common Expression Language, as
	// KubeStellar's StatusCollectors write them, over four variables of
	// each cluster's row: inventory (name, labels), obj (the workload
	// object on the control plane), returned (status, as the cluster
	// reports it) and propagation (stale, lastReturnedUpdateTimestamp).
	// E.g. returned.status.availableReplicas > 0. A filter must yield a
	// boolean. It is compiled when the StatusCollector is (its Valid
	// condition says what is wrong); an evaluation that fails on a row, or
	// costs more than 100,000 units, leaves that row's value out and is
	// listed in the combined status' errors.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	CEL string `json:"cel,omitempty"`

	// Path to read, for op Path: the CustomTransform JSONPath subset, over
	// the cluster's reported object augmented with inventory (name,
	// labels), obj, returned (status) and propagation (stale,
	// lastReturnedUpdateTimestamp): $.status.phase, $.inventory.name.
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
	// the cluster's reported object augmented with inventory (name,
	// labels), obj, returned (status) and propagation (stale,
	// lastReturnedUpdateTimestamp): $.status.phase, $.inventory.name.
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
	// the cluster's reported object augmented with inventory (name,
	// labels), obj, returned (status) and propagation (stale,
	// lastReturnedUpdateTimestamp): $.status.phase, $.inventory.name.
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
	// the cluster's reported object augmented with inventory (name,
	// labels), obj, returned (status) and propagation (stale,
	// lastReturnedUpdateTimestamp): $.status.phase, $.inventory.name.
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
	// the cluster's reported object augmented with inventory (name,
	// labels), obj, returned (status) and propagation (stale,
	// lastReturnedUpdateTimestamp): $.status.phase, $.inventory.name.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^\$[.\[]`
	Path string `json:"path"`
}
