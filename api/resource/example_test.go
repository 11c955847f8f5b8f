package resource_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/api/resource"
)

func ExampleParseQuantity() {
	for _, s := range []string{"1Gi", "1.5Gi", "1000m", "0.1", "1e3", "100.5", "0.0000000001"} {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-13s %-8s %-15s %d\n", s, q, q.Format, q.Value())
	}
	_, err := resource.ParseQuantity("1K")
	fmt.Println(err)
	// Output:
	// 1Gi           1Gi      BinarySI        1073741824
	// 1.5Gi         1536Mi   BinarySI        1610612736
	// 1000m         1        DecimalSI       1
	// 0.1           100m     DecimalSI       1
	// 1e3           1e3      DecimalExponent 1000
	// 100.5         100500m  DecimalSI       101
	// 0.0000000001  1n       DecimalSI       1
	// unable to parse quantity's suffix
}

func ExampleQuantity_Add() {
	total := resource.MustParse("1Gi")
	total.Add(resource.MustParse("512Mi"))
	fmt.Println(total.String())

	cpu := resource.MustParse("250m")
	cpu.Sub(resource.MustParse("1"))
	fmt.Println(cpu.String(), cpu.Cmp(resource.MustParse("-0.75")))
	// Output:
	// 1536Mi
	// -750m 0
}

func ExampleQuantity_ScaledValue() {
	q := resource.MustParse("1.5Gi")
	fmt.Println(q.Value(), q.ScaledValue(resource.Mega), q.MilliValue())
	// Output:
	// 1610612736 1611 1610612736000
}
