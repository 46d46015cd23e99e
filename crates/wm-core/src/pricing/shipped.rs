//! The shipped rate card's data: the prices per market and the regions each regional group
//! covers. Kept apart from the routing and look-up code so that a new card is a change of
//! this file only.

/// Code of the market of every region without a row or a group.
pub const OTHER: &str = "OTHER";

/// When the shipped prices took effect.
pub(super) const SHIPPED_EFFECTIVE: (i32, u32, u32) = (2026, 10, 1);

/// The shipped prices, USD micro-units per delivered template message:
/// (market, label, marketing, utility, authentication).
///
/// Source: the messaging platform's public USD rate card "effective October 1, 2026" (the
/// per-message card with MARKETING / UTILITY / AUTHENTICATION columns), as transcribed in
/// a public repository that downloaded it from the platform's pricing page; it was not
/// re-checked against the platform's own page from here. The per-country
/// "authentication-international" surcharge and the service-message column are not
/// modelled. The card lists more standalone markets than the 2025 cards (Bangladesh, Hong
/// Kong, Hungary, Iraq, Kazakhstan, Kuwait, Morocco, Nepal, Oman, Poland, Qatar, Romania,
/// Singapore, Sri Lanka, Ukraine); they are kept as the card has them.
pub(super) const SHIPPED: &[(&str, &str, i64, i64, i64)] = &[
    ("AR", "Argentina", 61_800, 26_000, 26_000),
    ("BD", "Bangladesh", 73_200, 3_700, 3_700),
    ("BR", "Brazil", 62_500, 6_800, 6_800),
    ("CL", "Chile", 88_900, 20_000, 20_000),
    ("CO", "Colombia", 12_500, 800, 800),
    ("EG", "Egypt", 64_400, 3_600, 3_600),
    ("FR", "France", 85_900, 30_000, 30_000),
    ("DE", "Germany", 136_500, 55_000, 55_000),
    ("HK", "Hong Kong", 73_200, 26_000, 26_000),
    ("HU", "Hungary", 86_000, 35_000, 35_000),
    ("IN", "India", 11_800, 1_400, 1_400),
    ("ID", "Indonesia", 41_100, 25_000, 25_000),
    ("IQ", "Iraq", 34_100, 7_900, 7_900),
    ("IL", "Israel", 35_300, 5_300, 5_300),
    ("IT", "Italy", 79_500, 30_000, 30_000),
    ("KZ", "Kazakhstan", 60_400, 18_000, 18_000),
    ("KW", "Kuwait", 79_200, 44_000, 44_000),
    ("MY", "Malaysia", 86_000, 14_000, 14_000),
    ("MX", "Mexico", 39_700, 8_500, 8_500),
    ("MA", "Morocco", 41_400, 23_000, 23_000),
    ("NL", "Netherlands", 159_700, 50_000, 50_000),
    ("NP", "Nepal", 73_200, 3_400, 3_400),
    ("NG", "Nigeria", 51_600, 6_700, 6_700),
    ("OM", "Oman", 34_100, 24_700, 24_700),
    ("PK", "Pakistan", 47_300, 15_000, 15_000),
    ("PE", "Peru", 70_300, 30_000, 30_000),
    ("PL", "Poland", 36_600, 12_200, 12_200),
    ("QA", "Qatar", 34_100, 12_000, 12_000),
    ("RO", "Romania", 86_000, 29_000, 29_000),
    ("RU", "Russia", 80_200, 40_000, 40_000),
    ("SA", "Saudi Arabia", 57_600, 10_700, 10_700),
    ("SG", "Singapore", 73_200, 16_000, 16_000),
    ("ZA", "South Africa", 37_900, 9_500, 9_500),
    ("ES", "Spain", 70_700, 20_000, 20_000),
    ("LK", "Sri Lanka", 73_200, 2_000, 2_000),
    ("TR", "Turkey", 10_900, 900, 900),
    ("UA", "Ukraine", 86_000, 29_800, 29_800),
    ("AE", "United Arab Emirates", 57_600, 15_700, 15_700),
    ("GB", "United Kingdom", 63_500, 22_000, 22_000),
    ("NORTH_AMERICA", "North America", 25_000, 3_400, 3_400),
    ("ROW_AFRICA", "Rest of Africa", 22_500, 4_000, 4_000),
    ("ROW_APAC", "Rest of Asia Pacific", 84_200, 11_300, 11_300),
    (
        "ROW_CEE",
        "Rest of Central & Eastern Europe",
        86_000,
        21_200,
        21_200,
    ),
    ("ROW_LATAM", "Rest of Latin America", 74_000, 11_300, 11_300),
    ("ROW_ME", "Rest of Middle East", 39_200, 9_100, 9_100),
    ("ROW_WE", "Rest of Western Europe", 59_200, 17_100, 17_100),
    (OTHER, "Other", 60_400, 7_700, 7_700),
];

/// Regions priced as another market: the card's regional groups (as the platform lists
/// them), plus territories that share a calling code with a country that has a row of its
/// own (Guernsey, Jersey and the Isle of Man dial +44, Vatican City +39, Western Sahara
/// +212, Svalbard +47, Åland +358, Cocos and Christmas Islands +61).
pub(super) const GROUPS: &[(&str, &[&str])] = &[
    ("NORTH_AMERICA", &["US", "CA"]),
    (
        "ROW_AFRICA",
        &[
            "DZ", "AO", "BJ", "BW", "BF", "BI", "CM", "TD", "CG", "ER", "ET", "GA", "GM", "GH",
            "GW", "CI", "KE", "LS", "LR", "LY", "MG", "MW", "ML", "MR", "MZ", "NA", "NE", "RW",
            "SN", "SL", "SO", "SS", "SD", "SZ", "TZ", "TG", "TN", "UG", "ZM", "ZW",
        ],
    ),
    (
        "ROW_APAC",
        &[
            "AF", "AU", "KH", "CN", "JP", "LA", "MN", "NZ", "PG", "PH", "TW", "TJ", "TM", "TH",
            "UZ", "VN", "CC", "CX",
        ],
    ),
    (
        "ROW_CEE",
        &[
            "AL", "AM", "AZ", "BY", "BG", "HR", "CZ", "GE", "GR", "LV", "LT", "MD", "MK", "RS",
            "SK", "SI",
        ],
    ),
    (
        "ROW_LATAM",
        &[
            "BO", "CR", "DO", "EC", "SV", "GT", "HT", "HN", "JM", "NI", "PA", "PY", "PR", "UY",
            "VE",
        ],
    ),
    ("ROW_ME", &["BH", "JO", "LB", "YE"]),
    (
        "ROW_WE",
        &[
            "AT", "BE", "DK", "FI", "IE", "NO", "PT", "SE", "CH", "SJ", "AX",
        ],
    ),
    ("GB", &["GG", "JE", "IM"]),
    ("IT", &["VA"]),
    ("MA", &["EH"]),
];
