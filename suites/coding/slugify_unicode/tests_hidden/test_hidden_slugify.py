from slugify import slugify, unique_slug


def test_accents_are_reduced_not_dropped():
    assert slugify("Crème brûlée à la française") == "creme-brulee-a-la-francaise"


def test_german_sharp_s_folds_to_ss():
    assert slugify("Straße & Maß") == "strasse-mass"


def test_ligature_and_full_width_digits():
    assert slugify("ﬁle ２０２４") == "file-2024"


def test_dotted_capital_i():
    assert slugify("İstanbul Guide") == "istanbul-guide"


def test_decomposed_input_matches_composed():
    composed = "Café"
    decomposed = "Cafe\u0301"
    assert slugify(composed) == slugify(decomposed) == "cafe"


def test_no_ascii_equivalent_is_dropped():
    assert slugify("東京 Tokyo 2020") == "tokyo-2020"
    assert slugify("東京") == ""


def test_unique_slug_for_non_ascii_title():
    assert unique_slug("Ünïcödé", {"unicode"}) == "unicode-2"
    assert unique_slug("日本", set()) == "untitled"


def test_max_length_counts_folded_characters():
    assert slugify("Überraschung Ärger", max_length=12) == "uberraschung"
