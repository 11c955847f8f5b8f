// Package cel evaluates the Common Expression Language as Kubernetes does:
// the CRD validation rules of kube-apiserver v1.37 (x-kubernetes-validations),
// on cel-go (github.com/google/cel-go, the engine Kubernetes uses) with the
// Kubernetes libraries implemented here. It depends only on the API types,
// so that the server and the SDK can share it.
//
// # The environment
//
// BaseEnv is the environment every expression starts from: cel-go's standard
// library with cross-type numeric comparisons, optional types, the strings
// (version 2), sets, two-variable comprehension and lists (version 3)
// extensions, literal validation, and the Kubernetes libraries:
//
//   - Lists: isSorted, sum, min, max, indexOf, lastIndexOf;
//   - Regex: find, findAll;
//   - URLs: url, isURL, getScheme, getHost, getHostname, getPort,
//     getEscapedPath, getQuery;
//   - Quantity: quantity, isQuantity, sign, isInteger, asInteger,
//     asApproximateFloat, add, sub, compareTo, isLessThan, isGreaterThan;
//   - IP and CIDR: ip, isIP, ip.isCanonical, family, isUnspecified,
//     isLoopback, isLinkLocalMulticast, isLinkLocalUnicast, isGlobalUnicast,
//     cidr, isCIDR, containsIP, containsCIDR, masked, prefixLength, string;
//   - Semver: semver, isSemver, major, minor, patch, compareTo, isLessThan,
//     isGreaterThan;
//   - Format: format.named and format.dns1123Label, dns1123Subdomain,
//     dns1035Label, qualifiedName, labelValue, their Prefix forms, uri,
//     uuid, byte, date, datetime; validate.
//
// What kube-apiserver v1.37.2 does not offer is left out too (cel.bind,
// string reverse, the member form of sign): a rule kapi accepts is one a
// cluster accepts. The image library is not implemented.
//
// # Admission policy expressions
//
// Admission policy expressions (not their messageExpressions) also have
// the authorizer library: authorizer and authorizer.requestResource build
// checks (group, resource, subresource, namespace, name, path,
// serviceAccount) whose check(verb) asks the AuthzFunc the caller gives
// (AuthorizerVars) and answers a decision (allowed, reason, errored,
// error); a check costs 350000, so an expression makes at most two.
//
// A PolicyCompiler compiles the expressions of one admission policy
// (matchConditions, variables, validations, messages, audit annotations,
// mutations) with the variables kube-apiserver gives them: object,
// oldObject, request, params and namespaceObject, dynamically typed, and
// variables, an object of the policy's variables typed in order
// (AddVariable). Results of the wrong type are refused with
// kube-apiserver's words ("must evaluate to bool but got string"). A
// compiler for mutations also knows JSONPatch{op, path, from, value} and
// the Object types of apply configurations (CompileMutation). Values are
// built with JSONValue and Variables and read back with Native.
//
// CheckPolicy type-checks expressions against a kind's schema (object and
// oldObject typed, params of the param kind's schema), as the policy
// status controller fills status.typeChecking; TypeCheckWarning words the
// result per kind.
//
// # CRD validation rules
//
// Compile compiles the rules of a CRD version's schema once; the Validator
// it returns evaluates them on each write (Validate). self has the type the
// schema gives the node: objects with their properties (names escaped as
// Escape does; apiVersion, kind and metadata.name and generateName at the
// root and in embedded resources), maps of additionalProperties, lists,
// int-or-string as dyn, strings of the formats byte, duration, date and
// date-time as bytes, durations and timestamps. Fields of
// x-kubernetes-preserve-unknown-fields objects and untyped fields are not
// visible, as in Kubernetes. Rules that use oldSelf run on updates where the
// node has an old value (an item of a list-type map or set, a map value, a
// property), or always with optionalOldSelf, oldSelf then being optional.
// Rules without oldSelf of a value an update leaves unchanged are not run
// again (ratcheting); transition rules are.
//
// Errors are worded as kube-apiserver's: message, messageExpression, or
// "failed rule: <rule>"; reason picks the cause type; fieldPath the field.
//
// # Costs
//
// Compile estimates each rule's cost from the schema's maxLength, maxItems
// and maxProperties (or the 3 MiB a request may hold) as kube-apiserver
// does, times the number of times the node can occur, and refuses a rule
// over StaticEstimatedCostLimit or a schema over
// StaticEstimatedCRDCostLimit with kube-apiserver's messages. At runtime a
// rule over PerCallLimit, or rules together over RuntimeCostBudget, stop
// the validation with an error.
package cel
