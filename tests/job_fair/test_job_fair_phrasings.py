"""Metric 2.2's default step mapper (`scoring.synonym_mapper`) on free-text workflow steps.

The phrasings below (`PHRASINGS`) were written before the mapper's vocabulary, as a recruiter (or an LLM
playing one) words the steps of MetaAgents' three standard workflows (Table 1, App. B):
imperatives ("Test the code"), noun phrases ("Code testing"), prepositional phrases
("Implementation of the design"), abbreviations ("QA", "ETL") and everyday words ("Write
docs"). Each must map to exactly its canonical step; steps outside the standard workflow
(deployment, launch, a team lunch) must map to nothing, so that they neither complete nor
break a workflow. The two phrasings the issue names ("Write docs" mapped to nothing, "Test the
code" to both Coding and Testing) are among them. `HELD_OUT` phrasings were written after the
mapper and never used to tune it. (The mapper as found, a bag of synonyms, mapped 246 of the 320
`PHRASINGS` and 73 of the 100 `HELD_OUT` phrasings to exactly their step.)
"""

from __future__ import annotations

import pytest

from teamenvs.job_fair.fair import catalogue
from teamenvs.job_fair.scoring import synonym_mapper, workflow_correct

PHRASINGS: dict[str, dict[str, tuple[str, ...]]] = {
    "software development": {
        "Designing": (
            "Requirements gathering", "Gather requirements from stakeholders", "Brainstorming session", "Ideation",
            "Product design", "UI/UX design", "Wireframing", "Create wireframes and mockups", "Prototyping",
            "Build a clickable prototype", "System architecture design", "Define the software architecture",
            "Project planning", "Plan the product roadmap", "Concept development", "Design the user interface",
            "User experience research", "Sketch the screens", "Technical design", "Scope the project",
            "Define product requirements", "Interface design", "Storyboarding the user journey", "Design phase",
            "Solution design", "Draft the technical design", "User flows and screen layouts", "Discovery and planning",
            "Analyse requirements", "Come up with the product concept", "Mock up the app screens", "Design",
        ),
        "Coding": (
            "Coding", "Write the code", "Software development", "Programming", "Implementation", "Implement the features",
            "Develop the application", "Build the software", "Backend development", "Front-end development", "Code review",
            "Peer code reviews", "Write the source code", "Develop core functionality", "Program the modules",
            "Feature implementation", "Engineering", "Build the product", "Develop the app in Python and Java",
            "Implementation of the design", "Write code for the features", "Construct the software", "Development sprints",
            "Coding and code review", "Develop", "Software engineering", "Build the application code", "Create the codebase",
            "Implement the backend and frontend", "Hands-on programming", "Full-stack development",
            "Translate the design into code",
        ),
        "Testing": (
            "Testing", "Quality assurance", "QA", "Test the code", "Unit testing", "Integration testing", "Debugging",
            "Bug fixing", "Find and fix bugs", "Write automated tests", "Test automation", "User acceptance testing",
            "Verification and validation", "Validate the software", "Code testing", "Run the test suite",
            "Regression testing", "QA review", "Software quality checks", "Test the application thoroughly",
            "Quality control", "System integration", "Bug tracking and resolution", "Performance testing",
            "Test plan execution", "Quality assurance (QA)", "Testing and debugging", "Verify the features work",
            "Beta testing", "Write test cases", "Check the code for defects", "Test",
        ),
        "Documenting": (
            "Documentation", "Write docs", "Write the user manual", "Technical writing", "User guide", "Create documentation",
            "Document the code", "Code documentation", "Release notes", "Write the README", "API documentation",
            "Prepare user manuals", "Knowledge base articles", "Help pages", "Document the system", "Documenting",
            "Produce the technical documentation", "Write a handbook for users", "Tutorials and FAQs", "Docs",
            "Create user guides and manuals", "Wiki pages for the project", "Write-up of the system", "Installation guide",
            "Documentation and handover", "Manuals", "Update the documentation", "Write the help documentation",
            "Developer documentation", "Final documentation", "Author the user manual", "Document code",
        ),
    },
    "data analysis": {
        "Data Acquisition & Cleaning": (
            "Data collection", "Collect the data", "Data acquisition", "Gather raw data", "Data cleaning", "Clean the data",
            "Data preprocessing", "Preprocess the dataset", "Data wrangling", "ETL", "Build the data pipeline",
            "Data ingestion", "Extract data from the client's systems", "Data preparation", "Prepare the data",
            "Handle missing values", "Data cleansing", "Source the data", "Deduplicate records", "Data engineering",
            "Scrape and import data", "Format the raw data", "Data quality checks", "Data validation",
            "Load data into the warehouse", "Retrieve data from sources", "Data gathering", "Clean and format the data",
            "Acquire the data", "Data sourcing and cleaning", "Transform raw data", "Data munging",
        ),
        "Model Development": (
            "Model development", "Build the model", "Train the model", "Model training", "Feature engineering",
            "Develop predictive models", "Machine learning modeling", "Modelling", "Algorithm selection",
            "Choose an algorithm", "Fit the models", "Hyperparameter tuning", "Model building",
            "Train machine learning algorithms", "Develop the predictive model", "Statistical modelling", "Model design",
            "Create the model", "Build a forecasting model", "Tune the model", "Feature selection", "Model fitting",
            "Prototype models", "Train and tune the models", "Apply machine learning", "Predictive modeling",
            "Develop algorithms", "Neural network training", "Model construction", "Iterate on the model",
            "Regression modelling", "Build the ML model",
        ),
        "Model Evaluation": (
            "Model evaluation", "Evaluate the model", "Model validation", "Validate the model", "Test the model",
            "Model testing", "Cross-validation", "Assess model performance", "Performance evaluation", "Benchmark the model",
            "Evaluate on held-out data", "Measure accuracy", "Check generalization", "Model assessment",
            "Verify the model's predictions", "Backtesting", "Error analysis", "Compute evaluation metrics", "Evaluation",
            "Validation", "Score the model on a test set", "Compare model performance", "Validate results",
            "Evaluate precision and recall", "Robustness checks", "Test predictive accuracy", "Out-of-sample testing",
            "Review model results", "Model validation and testing", "Evaluate the model's generalisation",
            "Assess the results", "Testing",
        ),
    },
    "advertising": {
        "Brief Creation": (
            "Brief creation", "Write the creative brief", "Creative brief", "Define campaign objectives", "Audience research",
            "Identify the target audience", "Market research", "Campaign strategy", "Content strategy",
            "Define the brand positioning", "Strategic planning", "Client briefing", "Research the product and audience",
            "Develop the brief", "Briefing", "Plan the campaign", "Outline objectives and tone", "Draft the brief",
            "Define the target market", "Competitor analysis", "Creative strategy", "Clarify the client's goals",
            "Kick-off briefing with the client", "Establish the poster's objectives", "Persona development",
            "Brief writing", "Project brief", "Research and strategy", "Campaign planning", "Define key objectives",
            "Set the campaign goals", "Strategy",
        ),
        "Copywriting": (
            "Copywriting", "Write the copy", "Write headlines", "Slogan creation", "Craft the tagline", "Draft the text",
            "Write the poster text", "Copy editing", "Proofreading", "Write ad copy", "Create slogans and taglines",
            "Text writing", "Content writing", "Write the body copy", "Headline development", "Copy drafting",
            "Write the messaging", "Wordsmithing", "Craft compelling copy", "Editing the copy", "Write the call to action",
            "Draft slogans", "Tagline brainstorming", "Writing", "Copy", "Compose the ad text", "Caption writing",
            "Refine the wording", "Write and edit the copy", "Produce the written content", "Draft the poster's headline",
            "Text and slogans",
        ),
        "Graphic Design": (
            "Graphic design", "Design the poster", "Visual design", "Layout design", "Create the artwork", "Illustration",
            "Typography", "Poster design", "Design the visuals", "Choose colours and fonts", "Art direction",
            "Produce the final poster", "Visual layout", "Create mockups of the poster", "Image selection", "Graphics",
            "Design", "Visual identity", "Lay out the poster", "Design the layout and visuals", "Illustrate the concept",
            "Create the graphics", "Artwork production", "Designing", "Digital design", "Poster artwork",
            "Graphic design and layout", "Aesthetic design", "Finalise the visual layout", "Render the poster design",
            "Colour palette and imagery", "Pick the imagery",
        ),
    },
}

# Steps that are no step of the standard workflow: they must map to nothing.
OUTSIDE: dict[str, tuple[str, ...]] = {
    "software development": ("Deployment", "Deploy the code", "Maintenance", "Launch the product", "Client handover",
                             "Team lunch", "Retrospective", "Release", "Project kickoff", "Celebrate the launch"),
    "data analysis": ("Deployment", "Model deployment", "Monitoring in production", "Maintenance", "Client handover",
                      "Team lunch", "Deploy the model to production", "Present to stakeholders"),
    "advertising": ("Printing and distribution", "Client approval", "Launch the campaign", "Team lunch", "Deployment",
                    "Print the posters", "Client sign-off"),
}


def business(name: str):
    return catalogue().businesses[name]


def test_at_least_thirty_distinct_phrasings_per_step():
    for name, steps in PHRASINGS.items():
        assert list(steps) == [s.name for s in business(name).workflow]
        for step, phrasings in steps.items():
            assert len(set(phrasings)) == len(phrasings) >= 30, (name, step)


@pytest.mark.parametrize("name", list(PHRASINGS))
def test_every_phrasing_maps_to_exactly_its_step(name):
    b = business(name)
    wrong = {}
    for step, phrasings in PHRASINGS[name].items():
        for text, mapped in zip(phrasings, synonym_mapper(b, phrasings)):
            if mapped != (step,):
                wrong[text] = mapped
    assert wrong == {}


@pytest.mark.parametrize("name", list(OUTSIDE))
def test_steps_outside_the_standard_workflow_map_to_nothing(name):
    mapped = synonym_mapper(business(name), OUTSIDE[name])
    assert dict(zip(OUTSIDE[name], mapped)) == {text: () for text in OUTSIDE[name]}


def test_the_issues_two_phrasings():
    sw = business("software development")
    assert synonym_mapper(sw, ["Write docs", "Test the code"]) == [("Documenting",), ("Testing",)]


@pytest.mark.parametrize("name", list(PHRASINGS))
def test_workflows_of_phrasings_with_extra_steps_are_correct(name):
    """One phrasing per step, rotated, with steps outside the workflow around them: still the canonical workflow."""
    b = business(name)
    canonical = [s.name for s in b.workflow]
    outside = OUTSIDE[name]
    for i in range(30):
        steps = [outside[i % len(outside)]]
        for step in canonical:
            steps.append(PHRASINGS[name][step][i])
        steps.append(outside[(i + 1) % len(outside)])
        assert workflow_correct(synonym_mapper(b, steps), canonical), steps


# Written after the mapper, never used to tune it: how well it generalises (94 of 100 at the time of writing;
# the misses are vague ("Gather user needs", "Write the application") or cross steps ("Fix data errors").
HELD_OUT: dict[str, dict[str, tuple[str, ...]]] = {
    "software development": {
        "Designing": (
            "Gather user needs", "Outline the product vision", "Create the design documents", "High-level design",
            "Conceptualize the app", "Define scope and features", "Architecture planning",
            "Product ideation workshop", "Design mock-ups", "Create a design spec",
        ),
        "Coding": (
            "Develop the software", "Write the application", "Code the solution", "Implementation phase",
            "Build features", "Programming the backend", "Software construction", "Development", "Write clean code",
            "Implement the solution",
        ),
        "Testing": (
            "QA testing", "Test and debug", "Validate functionality", "Quality checks", "Fix defects",
            "Run unit tests", "Testing phase", "Perform QA", "Verify the build", "Bug hunting",
        ),
        "Documenting": (
            "Write documentation", "Prepare the docs", "Create the user manual", "Documentation phase",
            "Write user docs", "Produce manuals", "Compile the documentation", "Technical docs", "Write the guide",
            "Document everything",
        ),
    },
    "data analysis": {
        "Data Acquisition & Cleaning": (
            "Get the data", "Data intake", "Obtain datasets", "Clean up the dataset", "Data prep", "Prepare datasets",
            "Data curation", "Fix data errors", "Pull data from the database", "Data sourcing",
        ),
        "Model Development": (
            "Develop the model", "Model creation", "Train models", "Build predictive models", "ML modelling",
            "Fit a regression", "Choose and train a model", "Modeling phase", "Create machine learning models",
            "Tune hyperparameters",
        ),
        "Model Evaluation": (
            "Evaluate performance", "Model scoring", "Validate the results", "Test model accuracy",
            "Model performance review", "Evaluate and validate", "Assess accuracy", "Check model performance",
            "Evaluation phase", "Measure model quality",
        ),
    },
    "advertising": {
        "Brief Creation": (
            "Create the brief", "Define the objectives", "Understand the client's needs",
            "Research the target audience", "Strategy development", "Briefing session", "Set objectives",
            "Define the audience and goals", "Campaign brief", "Plan the message strategy",
        ),
        "Copywriting": (
            "Write the text", "Copy creation", "Write slogans", "Develop the tagline", "Craft headlines",
            "Copywriting phase", "Draft the copy", "Write catchy text", "Edit the copy", "Copy writing",
        ),
        "Graphic Design": (
            "Design the graphics", "Create visuals", "Poster layout", "Visual creation", "Design phase",
            "Illustrate the poster", "Graphic creation", "Create the design", "Visual design of the poster",
            "Artwork design",
        ),
    },
}


def test_held_out_phrasings_mostly_map_to_their_step():
    right = total = 0
    for name, steps in HELD_OUT.items():
        for step, phrasings in steps.items():
            mapped = synonym_mapper(business(name), phrasings)
            right += sum(m == (step,) for m in mapped)
            total += len(phrasings)
    assert total == 100 and right >= 90
