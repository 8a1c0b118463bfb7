package schema

// Sequence is the sequence block: its steps run one after another (useful inside parallel).
type Sequence struct{ block }

var sequenceKind = Kind{
	Usage: "run steps one after another",
	New:   func() Params { return new(Sequence) },
}
