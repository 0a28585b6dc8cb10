"""Template expansion: HolisticBias descriptor x noun x template, translated gendered templates, HONEST."""
