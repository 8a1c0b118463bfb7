package envoy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// jsonStatsDoc is /stats?format=json: {"stats":[{"name":…,"value":…}, …, {"histograms":{…}}]}.
type jsonStatsDoc struct {
	Stats []struct {
		Name       *string         `json:"name"`
		Value      json.RawMessage `json:"value"`
		Histograms *struct {
			SupportedQuantiles []float64 `json:"supported_quantiles"`
			ComputedQuantiles  []struct {
				Name   string `json:"name"`
				Values []struct {
					Interval   *float64 `json:"interval"`
					Cumulative *float64 `json:"cumulative"`
				} `json:"values"`
			} `json:"computed_quantiles"`
		} `json:"histograms"`
	} `json:"stats"`
}

func decodeJSONStats(data []byte) (*jsonStatsDoc, error) {
	var doc jsonStatsDoc
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("stats json: %w", err)
	}
	if doc.Stats == nil {
		return nil, fmt.Errorf("stats json: no \"stats\" array (is this /stats?format=json?)")
	}
	return &doc, nil
}

// JSONStats parses /stats?format=json and returns the counters and gauges of exactly cluster
// (every stat by full name when cluster is ""), scoped and named as [ClusterStats] does. Text
// readouts (string values) and histograms are skipped; see [JSONHistograms].
func JSONStats(data []byte, cluster string) (map[string]float64, error) {
	doc, err := decodeJSONStats(data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64)
	for _, s := range doc.Stats {
		if s.Name == nil || len(s.Value) == 0 {
			continue
		}
		key, ok := scopeName(*s.Name, cluster)
		if !ok {
			continue
		}
		v := bytes.TrimSpace(s.Value)
		if len(v) == 0 || v[0] == '"' || v[0] == 'n' { // text readout, or null
			continue
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !isRangeErr(err) {
			return nil, fmt.Errorf("stats json: %s: value %s is not a number", *s.Name, v)
		}
		out[key] = f
	}
	return out, nil
}

// JSONHistograms parses the histograms of /stats?format=json into "<stat>.p<quantile>" →
// cumulative value, scoped and named as [ClusterHistograms] does.
func JSONHistograms(data []byte, cluster string) (map[string]float64, error) {
	doc, err := decodeJSONStats(data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64)
	for _, s := range doc.Stats {
		h := s.Histograms
		if h == nil {
			continue
		}
		suffixes := make([]string, len(h.SupportedQuantiles))
		for i, q := range h.SupportedQuantiles {
			suffixes[i] = ".p" + quantileSuffix(strconv.FormatFloat(q, 'f', -1, 64))
		}
		for _, cq := range h.ComputedQuantiles {
			key, ok := scopeName(cq.Name, cluster)
			if !ok {
				continue
			}
			for i, v := range cq.Values {
				if i >= len(suffixes) || v.Cumulative == nil || math.IsNaN(*v.Cumulative) {
					continue
				}
				out[key+suffixes[i]] = *v.Cumulative
			}
		}
	}
	return out, nil
}

// scopeName maps a full stat name to its key for cluster: the stat for a cluster, the
// normalised full name for "".
func scopeName(name, cluster string) (string, bool) {
	if cluster == "" {
		return strings.ReplaceAll(name, ";.", "."), true
	}
	return ClusterStat(name, cluster)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
