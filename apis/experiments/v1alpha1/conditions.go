package v1alpha1

// Condition types of the experiments group's kinds. Each kind carries one
// custom condition, named after its kind and group as Crossplane's
// function conditions are.
const (
	// ConditionExperiment is the custom condition an Experiment carries.
	ConditionExperiment = "experiment.fleetplane.io"
	// ConditionComponent is the custom condition a Component carries.
	ConditionComponent = "component.fleetplane.io"
)
