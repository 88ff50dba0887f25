/* test_rowtab.c -- Criterion tests of the table of named rows (engine/rowtab.h),
 * the one registry behind kinds, routing policies, schedulers, cost models and
 * run collectors: rows of structs and of pointers, lookup by name ignoring
 * case, registration (the same row again is a no-op, another row of a taken
 * name and a full table are refused), choice lists in table order. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/rowtab.h"

typedef struct row {
    int id;
    const char *name;
} row;

static const row STRUCTS[] = { { 1, "alpha" }, { 2, "beta" } };
static const row R3 = { 3, "gamma" }, R4 = { 4, "Beta" }, EMPTY = { 5, "" };
static const row *const POINTERS[] = { &STRUCTS[1], &R3 };

Test(rowtab, structs_and_pointers)
{
    rowtab s = ROWTAB_STRUCTS(STRUCTS, row), p = ROWTAB_POINTERS(POINTERS, row);
    cr_expect_eq(rowtab_count(&s), 2);
    cr_expect_eq(((const row *) rowtab_at(&s, 1))->id, 2);
    cr_expect_eq(rowtab_at(&s, 2), NULL);
    cr_expect_eq(rowtab_at(&s, -1), NULL);
    cr_expect_eq(rowtab_find(&s, "ALPHA"), &STRUCTS[0], "names match ignoring case");
    cr_expect_eq(rowtab_find(&s, "delta"), NULL);
    cr_expect_eq(rowtab_find(&p, "gamma"), &R3);
    cr_expect_eq(rowtab_index(&p, &R3), 1);
    cr_expect_eq(rowtab_index(&p, &STRUCTS[0]), -1);
    cr_expect_str_eq(rowtab_name(&p, &R3), "gamma");
}

Test(rowtab, registration_and_choices)
{
    rowtab s = ROWTAB_STRUCTS(STRUCTS, row);
    cr_expect_eq(rowtab_add(&s, &R3), 0);
    cr_expect_eq(rowtab_add(&s, &R3), 0, "the same row again does nothing");
    cr_expect_eq(rowtab_count(&s), 3);
    cr_expect_eq(rowtab_add(&s, &R4), -1, "Beta is taken by another row (names ignore case)");
    cr_expect_eq(rowtab_add(&s, &EMPTY), -1, "an empty name");
    cr_expect_eq(rowtab_add(&s, NULL), -1);
    char buf[64];
    rowtab_choices(&s, buf, sizeof buf);
    cr_expect_str_eq(buf, "alpha|beta|gamma");
    rowtab_choices(&s, buf, 8);
    cr_expect_str_eq(buf, "alpha|b", "truncated to fit");
    static row many[ROWTAB_MAX_EXTRA + 1];
    static char names[ROWTAB_MAX_EXTRA + 1][16];
    int added = 0;
    for (int i = 0; i <= ROWTAB_MAX_EXTRA; i++) {
        snprintf(names[i], sizeof names[i], "r%d", i);
        many[i] = (row) { 10 + i, names[i] };
        added += rowtab_add(&s, &many[i]) == 0;
    }
    cr_expect_eq(added, ROWTAB_MAX_EXTRA - 1, "the table is full at %d registered rows", ROWTAB_MAX_EXTRA);
    cr_expect_eq(rowtab_count(&s), 2 + ROWTAB_MAX_EXTRA);
}
