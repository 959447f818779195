// Package sample sends one Prometheus sample through an adx-mon stack and
// finds it in Kusto: what a test needs to show that the collectors, the
// ingestor and the ADX cluster it composes are connected as composed.
package sample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fleetplane/fleetplane/test/harness/kustoserver"
	"github.com/fleetplane/fleetplane/test/harness/support"
)

const (
	// metric is the sample's name, and table the Kusto table adx-mon
	// writes it to (its name in Pascal case), in database.
	metric, table, database = "fleetplane_sample", "FleetplaneSample", "Metrics"
	value                   = 42
)

// Post remote-writes the sample of test (the gauge fleetplane_sample,
// 42, labelled test=<test>) to the collector whose pod has IP ip, as an
// application's Prometheus would. A collector's pod is Ready once it
// runs, a moment before it listens: until it answers, Post asks again.
func Post(t testing.TB, ip, test string) {
	t.Helper()
	body := RemoteWrite(metric, map[string]string{"test": test}, value, time.Now())
	c := &http.Client{Timeout: 30 * time.Second}
	var status string
	support.Eventually(t, time.Minute, "the collector at "+ip+" answering a remote write", func() (bool, string) {
		rsp, err := c.Post("http://"+ip+":8080/receive", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			return false, err.Error()
		}
		_ = rsp.Body.Close()
		status = rsp.Status
		return true, ""
	})
	if !strings.HasPrefix(status, "2") {
		t.Fatalf("the collector answered the remote write with %s", status)
	}
}

// InKusto is a condition: the sample Post sent for test is a row of the
// Metrics database of ks. Until it is, it says what Kusto has and saw,
// and what diag adds (the pods' logs, say).
func InKusto(ks *kustoserver.Server, test string, diag func() string) func() (bool, string) {
	return func() (bool, string) {
		for name := range ks.Tables(database) {
			if !strings.EqualFold(name, table) {
				continue
			}
			for _, row := range ks.Rows(database, name) {
				// The value, and the label the sample carried (in the
				// dynamic Labels column, kept as JSON).
				var v, labelled bool
				for _, col := range row {
					switch col := col.(type) {
					case json.RawMessage:
						labelled = labelled || strings.Contains(string(col), `"test":"`+test+`"`)
					default:
						v = v || fmt.Sprint(col) == strconv.Itoa(value)
					}
				}
				if v && labelled {
					return true, ""
				}
			}
		}
		var cmds []string
		for _, c := range ks.Commands() {
			cmds = append(cmds, c.Text[:min(len(c.Text), 80)])
		}
		return false, fmt.Sprintf("rows %v; tables %v; commands %q\n%s", ks.Rows(database, table), slices.Sorted(maps.Keys(ks.Tables(database))), cmds, diag())
	}
}

// RemoteWrite is a Prometheus remote-write request of one sample of the
// gauge name with labels, as Prometheus sends it: a WriteRequest in
// protobuf, snappy-compressed.
func RemoteWrite(name string, labels map[string]string, value float64, at time.Time) []byte {
	var ts []byte
	label := func(k, v string) {
		var l []byte
		l = protowire.AppendTag(l, 1, protowire.BytesType)
		l = protowire.AppendString(l, k)
		l = protowire.AppendTag(l, 2, protowire.BytesType)
		l = protowire.AppendString(l, v)
		ts = protowire.AppendTag(ts, 1, protowire.BytesType)
		ts = protowire.AppendBytes(ts, l)
	}
	label("__name__", name)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		label(k, labels[k])
	}
	var s []byte
	s = protowire.AppendTag(s, 1, protowire.Fixed64Type)
	s = protowire.AppendFixed64(s, math.Float64bits(value))
	s = protowire.AppendTag(s, 2, protowire.VarintType)
	s = protowire.AppendVarint(s, uint64(at.UnixMilli()))
	ts = protowire.AppendTag(ts, 2, protowire.BytesType)
	ts = protowire.AppendBytes(ts, s)
	var req []byte
	req = protowire.AppendTag(req, 1, protowire.BytesType)
	req = protowire.AppendBytes(req, ts)
	return snappy.Encode(nil, req)
}
