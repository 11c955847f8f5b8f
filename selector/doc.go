// Package selector implements Kubernetes label selectors and field
// selectors: parsing them from their string form, matching them against
// objects, and printing them in a canonical form. Its behaviour follows
// k8s.io/apimachinery/pkg/labels and k8s.io/apimachinery/pkg/fields, so a
// string accepted here means the same thing to a Kubernetes API server.
//
// # Label selectors
//
// [ParseLabels] parses strings such as
//
//	app=web,tier!=cache,env in (prod,staging),!canary,example.com/team
//
// A selector is a comma-separated list of requirements that must all hold:
//
//	key              the label exists ([Exists])
//	!key             the label does not exist ([DoesNotExist])
//	key=value        the label has the value ([Equals]; "==" is [DoubleEquals])
//	key!=value       the label is absent or has another value ([NotEquals])
//	key in (a,b)     the label has one of the values ([In])
//	key notin (a,b)  the label is absent or has none of the values ([NotIn])
//	key>5, key<5     the label is an integer greater or less than 5
//	                 ([GreaterThan], [LessThan])
//
// Keys are validated like Kubernetes label keys: an optional DNS subdomain
// prefix of at most 253 bytes and a "/", then a name of at most 63 bytes of
// ASCII letters, digits, '-', '_' and '.', starting and ending with a letter
// or digit. Values follow the same rule for names but may also be empty
// ("key=", "key in (a,)"). Blanks between tokens are ignored. The empty
// string selects everything.
//
// A [LabelSelector] is matched against any [Labels] implementation, such as
// a [Set]. [SelectorFromSet] builds the selector that matches a set of
// labels exactly, and [NewLabelRequirement] with [LabelSelector.Add]
// builds selectors programmatically. [Everything], like the zero
// LabelSelector, matches all objects.
//
// # Field selectors
//
// [ParseFields] parses strings such as
//
//	metadata.name=web,status.phase!=Running
//
// Each term is "field=value", "field==value" or "field!=value". A
// [FieldSelector] is matched against any [Fields] implementation ([Set] is
// one); a field that is absent reads as the empty string. In values, '\',
// ',' and '=' are written escaped as "\\", "\," and "\=";
// [EscapeFieldValue] and [UnescapeFieldValue] convert. Field names are not
// validated, and blanks in field selectors are significant, as in
// Kubernetes.
//
// # Canonical form
//
// The String method of both selector kinds returns a canonical form:
// requirements sorted by key (or field), then operator in the declaration
// order of the [Operator] constants, then values; the values of "in" and
// "notin" sorted and de-duplicated; field values escaped; "==" kept in
// label selectors but written "=" in field selectors; no blanks except
// around "in" and "notin". Parsing the canonical form gives back an
// identical selector, so equal strings mean equal selectors, and the
// string can serve as a cache key.
//
// # Inspecting selectors
//
// [LabelSelector.Requirements] and [FieldSelector.Requirements] expose the
// parsed requirements in canonical order. For index lookups,
// RequiresExactMatch reports whether a selector pins a key (or field) to a
// single value, as "app=web" or "app in (web)" do.
//
// # Errors
//
// Parse errors are of type *[ParseError]; they carry the input, the byte
// offset and text of the offending token, and a message worded like the
// Kubernetes one, for example:
//
//	unable to parse requirement: found '=', expected: identifier at position 3 in "a,=b"
//
// When a label key or value breaks the Kubernetes rules, the ParseError
// wraps a *[ValidationError] naming the key or value and every rule it
// breaks; [ValidateLabelKey] and [ValidateLabelValue] apply the same rules
// on their own.
//
// # Differences from Kubernetes
//
// The canonical order is total. Kubernetes sorts label requirements by key
// only, keeping input order among requirements on the same key, and sorts
// field terms by their raw text, so its String output can depend on the
// input order, and for field selectors is not always stable under a
// re-parse. Here "a=x,a!=y" and "a!=y,a=x" print identically.
//
// [LabelSelector.RequiresExactMatch] considers every requirement on the key,
// not just the first one, so "a!=x,a=y" pins a to "y".
//
// The Kubernetes label selector lexer treats a NUL byte as the end of the
// input or as a token separator, depending on where it occurs, and may
// silently ignore the rest of the input; here NUL is an ordinary
// character, so such input is rejected as an invalid key or value.
//
// Field values are unescaped byte by byte, so bytes that are not valid
// UTF-8 are kept rather than replaced by U+FFFD.
//
// Error messages quote the end of input as ” (as Kubernetes does), list the
// operators as they are written ('>' and '<', not gt and lt), and state the
// location; ParseError.Msg holds the message without the location.
//
// The selectors are immutable values rather than interfaces; there is no
// counterpart to the Kubernetes Nothing selector or to field selector
// transforms.
package selector
