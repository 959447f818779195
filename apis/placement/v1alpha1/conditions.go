package v1alpha1

// Condition types of the placement group's kinds.
const (
	// ConditionDelivered says whether every copy of a Placement is on its
	// cluster.
	ConditionDelivered = "Delivered"
	// ConditionStatusCombined says whether every StatusCollector a
	// Placement names could be evaluated; only when it names some.
	ConditionStatusCombined = "StatusCombined"
	// ConditionReportedState says what became of a Placement's
	// wantSingletonReportedState; only when it is set.
	ConditionReportedState = "ReportedState"
	// ConditionValid is the condition CustomTransforms and
	// StatusCollectors carry: whether Placements can use them as written.
	ConditionValid = "Valid"
)
