module buf.build/gen/go/opentelemetry/opentelemetry/bufbuild/connect-go

go 1.24

require (
	buf.build/gen/go/opentelemetry/opentelemetry/protocolbuffers/go v0.0.0
	github.com/bufbuild/connect-go v1.10.0
)

replace buf.build/gen/go/opentelemetry/opentelemetry/protocolbuffers/go => ../protocolbuffers
