/* A library linked with 4 KiB segment alignment, for test_code_pages. */
int code_pages_lib_answer(int x);
int code_pages_lib_answer(int x)
{
    return 6 * x;
}
