package network

import (
	"reflect"
	"sync"
	"sync/atomic"

	gometrics "github.com/rcrowley/go-metrics"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ErrorsPerSec (kafka.network:type=RequestMetrics,name=ErrorsPerSec,
// request=<api>,error=<Errors name>): for every response sent, each error
// code in it is counted, NONE included, as Kafka's AbstractResponse
// errorCounts do. Fetch errors count under request=Fetch (Kafka uses the
// API's name here, not FetchConsumer/FetchFollower). A request answered
// with no response (acks=0) counts nothing, as in Kafka.
//
// The codes are found by walking the response's ErrorCode fields: the
// top-level one and those of every nested element (topics, partitions,
// groups, ...), which is what Kafka's errorCounts add up for the APIs
// Klassik serves. The walk's plan is computed once per response type;
// walking allocates nothing.

// errorSlots covers codes -1 .. errorSlots-2.
const errorSlots = 128

// errorMeters are one request name's ErrorsPerSec meters, by code+1,
// created at a code's first occurrence.
type errorMeters struct {
	name   string
	meters [errorSlots]atomic.Pointer[gometrics.StandardMeter]
	mu     sync.Mutex // serialises the creation of meters
}

// KafkaErrorName is the name of code in Kafka 2.8's Errors enum, as the
// ErrorsPerSec error tag spells it; codes Kafka 2.8 does not know are
// UNKNOWN_SERVER_ERROR (Errors.forCode).
func KafkaErrorName(code int16) string {
	switch code {
	case 0:
		return "NONE"
	case 6: // kerr keeps the pre-2.6 name
		return "NOT_LEADER_OR_FOLLOWER"
	}
	if code > maxKafkaErrorCode || code < -1 {
		return "UNKNOWN_SERVER_ERROR"
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return "UNKNOWN_SERVER_ERROR"
}

// maxKafkaErrorCode is the highest code of Kafka 2.8's Errors
// (INCONSISTENT_CLUSTER_ID).
const maxKafkaErrorCode = 104

func (em *errorMeters) meter(r gometrics.Registry, code int16) gometrics.Meter {
	if code > maxKafkaErrorCode || code < -1 {
		code = -1 // Kafka's Errors.forCode of an unknown code
	}
	slot := int(code) + 1
	if m := em.meters[slot].Load(); m != nil {
		return m
	}
	em.mu.Lock()
	defer em.mu.Unlock()
	if m := em.meters[slot].Load(); m != nil {
		return m
	}
	name := "kafka.network.RequestMetrics.ErrorsPerSec.request=" + em.name + ".error=" + KafkaErrorName(code)
	m, ok := r.GetOrRegister(name, gometrics.NewMeter).(*gometrics.StandardMeter)
	if !ok {
		return gometrics.NilMeter{}
	}
	em.meters[slot].Store(m)
	return m
}

// errorCounts accumulates a response's codes before marking the meters,
// so a produce of 100 healthy partitions marks NONE once with 100.
type errorCounts struct {
	n      int
	codes  [8]int16
	counts [8]int64
	// Codes beyond the eight distinct ones that fit are marked as they
	// come, through em, or kept in more when em is nil (Encode).
	em   *errorMeters
	more []codeCount
	r    gometrics.Registry
}

func (c *errorCounts) add(code int16) {
	for i := 0; i < c.n; i++ {
		if c.codes[i] == code {
			c.counts[i]++
			return
		}
	}
	if c.n == len(c.codes) {
		if c.em == nil {
			for i := range c.more {
				if c.more[i].code == code {
					c.more[i].count++
					return
				}
			}
			c.more = append(c.more, codeCount{code, 1})
			return
		}
		c.em.meter(c.r, code).Mark(1)
		return
	}
	c.codes[c.n], c.counts[c.n] = code, 1
	c.n++
}

// recordErrors counts resp's error codes (resp nil: nothing).
func (em *errorMeters) recordErrors(r gometrics.Registry, resp kmsg.Response) {
	if resp == nil {
		return
	}
	if e, ok := resp.(*EncodedResponse); ok { // counted at encoding
		for _, cc := range e.enc.errs {
			em.meter(r, cc.code).Mark(cc.count)
		}
		return
	}
	c := errorCounts{em: em, r: r}
	countErrors(resp, &c)
	for i := 0; i < c.n; i++ {
		em.meter(r, c.codes[i]).Mark(c.counts[i])
	}
}

// countErrors adds resp's error codes to c.
func countErrors(resp kmsg.Response, c *errorCounts) {
	switch v := resp.(type) {
	case *kmsg.ProduceResponse: // the hot paths, without reflection
		for i := range v.Topics {
			for j := range v.Topics[i].Partitions {
				c.add(v.Topics[i].Partitions[j].ErrorCode)
			}
		}
	case *kmsg.FetchResponse:
		c.add(v.ErrorCode)
		for i := range v.Topics {
			for j := range v.Topics[i].Partitions {
				c.add(v.Topics[i].Partitions[j].ErrorCode)
			}
		}
	default:
		rv := reflect.ValueOf(resp)
		if rv.Kind() != reflect.Pointer || rv.IsNil() {
			return
		}
		rv = rv.Elem()
		planFor(rv.Type(), resp.Key()).walk(rv, c)
	}
}

// errorPlan says where a struct type's ErrorCode fields are: its own
// (field index, -1 if none) and those of the elements of its slice and
// struct fields.
type errorPlan struct {
	code   int
	nested []nestedPlan
}

type nestedPlan struct {
	field int
	slice bool
	plan  *errorPlan
}

var errorPlans sync.Map // reflect.Type -> *errorPlan

// laterTopLevelCode are the APIs whose response has a top-level
// ErrorCode only in versions after Kafka 2.8 (Metadata v13,
// AddPartitionsToTxn v4, DescribeLogDirs v3): Kafka 2.8 counts none.
var laterTopLevelCode = map[int16]bool{3: true, 24: true, 35: true}

func planFor(t reflect.Type, key int16) *errorPlan {
	if p, ok := errorPlans.Load(t); ok {
		return p.(*errorPlan)
	}
	p := buildPlan(t, 0)
	if p != nil && laterTopLevelCode[key] {
		p.code = -1
	}
	errorPlans.Store(t, p)
	return p
}

// buildPlan computes t's plan; nil when t holds no ErrorCode at all.
// kmsg types are trees, depth bounds any surprise.
func buildPlan(t reflect.Type, depth int) *errorPlan {
	if t.Kind() != reflect.Struct || depth > 8 {
		return nil
	}
	p := &errorPlan{code: -1}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch {
		case f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16:
			p.code = i
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			if sub := buildPlan(f.Type.Elem(), depth+1); sub != nil {
				p.nested = append(p.nested, nestedPlan{field: i, slice: true, plan: sub})
			}
		case f.Type.Kind() == reflect.Struct:
			if sub := buildPlan(f.Type, depth+1); sub != nil {
				p.nested = append(p.nested, nestedPlan{field: i, plan: sub})
			}
		}
	}
	if p.code < 0 && len(p.nested) == 0 {
		return nil
	}
	return p
}

func (p *errorPlan) walk(v reflect.Value, c *errorCounts) {
	if p == nil {
		return
	}
	if p.code >= 0 {
		c.add(int16(v.Field(p.code).Int()))
	}
	for _, n := range p.nested {
		f := v.Field(n.field)
		if !n.slice {
			n.plan.walk(f, c)
			continue
		}
		for j := 0; j < f.Len(); j++ {
			n.plan.walk(f.Index(j), c)
		}
	}
}
