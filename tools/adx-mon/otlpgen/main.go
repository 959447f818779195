// Command otlpgen writes OTLP's Go messages under the buf.build import
// paths adx-mon v0.3.0 imports, whose modules the Go module proxy does
// not serve, into otlp/protocolbuffers. It is protoc-gen-go's own
// generator run on the descriptors go.opentelemetry.io/proto/otlp
// registers, with the hybrid API buf generates (Has and Set accessors,
// which adx-mon's collector calls), so the messages are the same
// messages, generated the same way. Run from tools/adx-mon:
//
//	go run ./otlpgen
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	collectorlogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
)

// prefix is the buf.build module the files land under.
const prefix = "buf.build/gen/go/opentelemetry/opentelemetry/protocolbuffers/go/"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otlpgen:", err)
		os.Exit(1)
	}
}

func run() error {
	// The two services' files and everything they import, dependencies
	// first, as protoc hands them to a plugin.
	var files []*descriptorpb.FileDescriptorProto
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		files = append(files, protodesc.ToFileDescriptorProto(fd))
	}
	add(collectorlogs.File_opentelemetry_proto_collector_logs_v1_logs_service_proto)
	add(collectormetrics.File_opentelemetry_proto_collector_metrics_v1_metrics_service_proto)

	params := []string{"default_api_level=API_HYBRID", "paths=import"}
	var generate []string
	for _, f := range files {
		if !strings.HasPrefix(f.GetName(), "opentelemetry/") {
			continue
		}
		dir := filepath.Dir(f.GetName())
		// The package names buf gives them: logsv1, metricsv1, ...
		name := filepath.Base(filepath.Dir(dir)) + filepath.Base(dir)
		params = append(params, fmt.Sprintf("M%s=%s%s;%s", f.GetName(), prefix, dir, name))
		generate = append(generate, f.GetName())
	}
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: generate, Parameter: new(strings.Join(params, ",")), ProtoFile: files}
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		return err
	}
	for _, f := range gen.Files {
		if f.Generate {
			gengo.GenerateFile(gen, f)
		}
	}
	rsp := gen.Response()
	if rsp.Error != nil {
		return fmt.Errorf("%s", rsp.GetError())
	}
	for _, f := range rsp.File {
		path := filepath.Join("otlp", "protocolbuffers", strings.TrimPrefix(f.GetName(), prefix))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(f.GetContent()), 0o644); err != nil {
			return err
		}
		fmt.Println(path)
	}
	return nil
}
