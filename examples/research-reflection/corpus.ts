// The small local document collection the research pipeline searches instead of the web.
import type { Doc } from "../shared/search-index.js";

const doc = (id: string, title: string, text: string): Doc => ({
  id,
  url: `corpus://heat-pumps/${id}`,
  title,
  text,
});

export const HEAT_PUMP_CORPUS: readonly Doc[] = [
  doc(
    "how-heat-pumps-work",
    "How air-source heat pumps work",
    "An air-source heat pump moves heat from outdoor air into a building instead of burning fuel. " +
      "Its efficiency is the coefficient of performance (COP): the heat delivered divided by the electricity used. " +
      "A COP of 3 means three units of heat for one unit of electricity. " +
      "The COP falls as the outdoor temperature falls, because the pump has to lift heat across a larger temperature gap.",
  ),
  doc(
    "cold-climate-models",
    "Cold-climate heat pumps below freezing",
    "Cold-climate models use variable-speed compressors and vapour injection to keep working below freezing. " +
      "Laboratory tests show a COP around 2 at -15 °C and still above 1.5 at -25 °C. " +
      "Heating capacity also drops in deep cold, so a unit sized for mild weather may not cover the coldest nights. " +
      "Most manufacturers publish capacity tables down to -25 °C or -30 °C.",
  ),
  doc(
    "nordic-field-study",
    "Field study: heat pumps in Nordic homes",
    "A field study logged measured data from 120 homes in Norway, Sweden and Finland over two winters. " +
      "The measured seasonal performance factor averaged 2.9, with the best installations above 3.3. " +
      "Homes with poor insulation or undersized units reached only 2.1. " +
      "The study found that installation quality mattered more than the brand of the unit.",
  ),
  doc(
    "running-costs",
    "Running costs compared with gas boilers",
    "Whether a heat pump is cheaper to run than a gas boiler depends on the ratio of electricity to gas prices. " +
      "With a seasonal COP of 3, a heat pump costs less to run whenever electricity costs less than three times as much as gas per kilowatt-hour. " +
      "Time-of-use tariffs and pre-heating at night lower the bill further. " +
      "Upfront costs remain higher than for a boiler, although grants cover part of them in several countries.",
  ),
  doc(
    "sizing-and-backup",
    "Sizing, installation and backup heat",
    "Installers size the unit for the design temperature of the region, typically the coldest 1 % of hours. " +
      "An undersized unit relies on electric resistance backup heat, which has a COP of 1 and raises running costs. " +
      "Good installations also lower the radiator flow temperature, which raises the COP.",
  ),
  doc(
    "defrost",
    "Defrost cycles and icing in humid cold",
    "Between 0 °C and -7 °C in humid weather, frost builds on the outdoor coil. " +
      "The unit reverses briefly to melt it; these defrost cycles cut seasonal efficiency by a few percent. " +
      "Modern controls defrost on demand rather than on a timer, which limits the loss.",
  ),
  doc(
    "grid-peaks",
    "Electricity grid peaks on the coldest days",
    "When many homes heat with heat pumps, electricity demand peaks on the coldest days, exactly when the COP is lowest. " +
      "Grid operators in Nordic countries plan for this peak with demand response and thermal storage. " +
      "Measured data from Norway shows peak demand per home rising by about 1.5 kW.",
  ),
  doc(
    "ground-source",
    "Ground-source heat pumps as an alternative",
    "Ground-source heat pumps draw heat from boreholes where the temperature stays stable all year. " +
      "Their COP barely changes in cold spells, but drilling makes them two to three times as expensive to install.",
  ),
];

export const DEFAULT_MAIN_QUERY = "How well do heat pumps perform in cold climates?";

/** The sub-questions an earlier decomposition step produced for the main query. */
export const DEFAULT_SUB_QUESTIONS: readonly string[] = [
  "How does the coefficient of performance change below freezing?",
  "What seasonal performance do homes in cold regions achieve?",
  "How do running costs compare with gas boilers?",
  "What happens to the electricity grid on the coldest days?",
  "How much do defrost cycles reduce efficiency?",
  "How long do heat pumps last in harsh winters?",
];
