module buf.build/gen/go/opentelemetry/opentelemetry/protocolbuffers/go

go 1.24

require google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af
